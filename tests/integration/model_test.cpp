// A randomized, model-based test of the acquisition protocol on real connections.
//
// One driver thread owns kSessions connections at READ COMMITTED, REPEATABLE READ and
// SERIALIZABLE and, from a std::mt19937_64 seeded by IDEM_MODEL_SEED, repeatedly picks a session
// and an action for it: BEGIN, acquire (on_busy reject or wait, tiny leases and TTLs, two or three
// payloads per key), checkpoint, complete, release, SAVEPOINT / ROLLBACK TO / RELEASE, COMMIT,
// ROLLBACK, PREPARE TRANSACTION and later COMMIT/ROLLBACK PREPARED from any session, calls with
// stale fencing tokens, sleeps; a dedicated session calls purge_expired, sometimes inside a
// transaction it keeps open for a while. Statements are synchronous, so nothing runs concurrently
// and the model always knows who holds what.
//
// The model keeps the COMMITTED state of every key (and, per open transaction, what it wrote: the
// overlay applied at COMMIT / COMMIT PREPARED and dropped at ROLLBACK / ROLLBACK TO SAVEPOINT /
// ROLLBACK PREPARED / an error). Time is the server's: every call is bracketed by clock_timestamp()
// in the same statement, so "lease live", "became history" are decided with server times, and a
// boundary inside a call's window accepts either answer. After every step it checks
//   1. at most one live holder per key and generation (committed, open or prepared grants);
//   2. no second acquired/resumed within a generation unless the previous grant's lease expired
//      or it was released in between;
//   3. a replay returns the bytes (status, headers, body, order_id) of the committed complete of
//      that key and generation (or of the caller's own uncommitted complete);
//   4. a stale token always gets ERR_LEASE_LOST (IK005) and changes nothing;
//   5. reject mode never waits: no 55P03 under lock_timeout = 2s, no call over 1 s; holder calls
//      (checkpoint/complete/release) and purge_expired never wait either; on_busy => 'wait' polls at
//      most idem.wait_timeout, and only under READ COMMITTED;
//   6. the generation of a key never decreases (purge included) and fencing tokens always grow;
//   7. after a refused acquire in an open transaction the session holds no advisory lock on the
//      key and no row lock on its record (probed from another connection);
// and, beyond the invariants, that every answer is one the contract allows from the model's
// state (outcome, generation, recovery point, replayed bytes), that idem.keys agrees with the
// committed model after every commit, and that purge_expired deletes exactly the history records
// not in use. At the end it finishes every transaction, replays every live resolved record, sleeps
// past every TTL, purges, and checks what is left and that a purged key starts at generation + 1.
//
// Replay: the seed is printed at the start and with every failure ("replay with
// IDEM_MODEL_SEED=..."). Each step draws the same number of random words whatever happened, so
// the same seed replays the same choices; outcomes that depend on elapsed time (a lease that did
// or did not expire before the next statement, how many steps fit in the duration) may differ
// from run to run, and from there the runs can diverge. IDEM_MODEL_MAX_OPS stops after that many
// steps. Duration: IDEM_MODEL_SECONDS (default 20, the run `make test` does); the 10-minute run:
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <random>
#include <string>

#include "tests/integration/model/model_run.hpp"
#include "tests/integration/pq.hpp"

namespace idem::it {
namespace {

using model::kDefaultSeconds;
using model::ModelRun;
using model::ModelViolation;

std::uint64_t seed_from_env() {
  const char* v = std::getenv("IDEM_MODEL_SEED");
  if (v != nullptr && *v != '\0') return std::strtoull(v, nullptr, 0);
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
         static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
}

double seconds_from_env() {
  const char* v = std::getenv("IDEM_MODEL_SECONDS");
  if (v != nullptr && *v != '\0') return std::strtod(v, nullptr);
  return kDefaultSeconds;
}

long max_ops_from_env() {
  const char* v = std::getenv("IDEM_MODEL_MAX_OPS");
  if (v != nullptr && *v != '\0') return std::strtol(v, nullptr, 10);
  return 0;
}

class ProtocolModel : public ::testing::Test {
 protected:
  void SetUp() override { db_ = std::make_unique<ScratchDatabase>(); }

  // Prepared transactions outlive their sessions and would keep the scratch database (and the
  // cluster's max_prepared_transactions slots): finish them, also after a failure.
  void TearDown() override {
    if (!db_) return;
    try {
      Connection c(db_->url());
      const Result gids =
          c.exec("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'model_%' AND database = current_database()");
      for (std::size_t i = 0; i < gids.size(); ++i) c.exec("ROLLBACK PREPARED '" + gids.text(i, "gid") + "'");
    } catch (const std::exception& e) {
      ADD_FAILURE() << "could not roll back the prepared transactions: " << e.what();
    }
    db_.reset();
  }

  std::unique_ptr<ScratchDatabase> db_;
};

TEST_F(ProtocolModel, ShortRun) {
  const std::uint64_t seed = seed_from_env();
  ModelRun run(db_->url(), seed, seconds_from_env(), max_ops_from_env());
  try {
    run.run();
  } catch (const ModelViolation& e) {
    std::printf("%s\n", run.summary().c_str());
    FAIL() << e.what();
  } catch (const std::exception& e) {
    std::printf("%s\n", run.summary().c_str());
    FAIL() << "model run aborted: " << e.what() << "\nreplay with IDEM_MODEL_SEED=" << seed;
  }
  std::printf("%s\n", run.summary().c_str());
}

}  // namespace
}  // namespace idem::it
