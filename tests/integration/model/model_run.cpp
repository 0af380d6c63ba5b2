// ModelRun: the main loop, set-up, transactions (BEGIN, COMMIT, ROLLBACK, savepoints, PREPARE
// TRANSACTION and COMMIT/ROLLBACK PREPARED) and the end of the run.
#include "tests/integration/model/model_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace idem::it::model {

void ModelRun::run() {
  setup();
  started_ = Clock::now();
  auto last_report = started_;
  while (true) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
    if (elapsed >= seconds_ || (max_ops_ > 0 && step_ >= max_ops_)) break;
    ++step_;
    Draw d;
    for (auto& x : d) x = rng_();
    if (d[0] % 100 < 4 || (purge_open_ && step_ - purge_since_ > kMaxPurgeTxSteps)) {
      purge_step(d);
    } else {
      session_step(sessions_[d[1] % kSessions], d);
    }
    if (step_ % 100 == 0) cross_check_all();
    if (Clock::now() - last_report > std::chrono::seconds(60)) {
      last_report = Clock::now();
      std::printf("model: %.0f s %s\n", elapsed, counters().c_str());
      std::fflush(stdout);
    }
  }
  finish();
}

std::string ModelRun::summary() const {
  char head[160];
  const double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  std::snprintf(head, sizeof head, "model: seed=%" PRIu64 " seconds=%.1f ", seed_, seconds);
  return head + counters();
}

std::string ModelRun::counters() const {
  char buf[640];
  std::snprintf(
      buf, sizeof buf,
      "ops=%ld statements=%ld acquired=%ld resumed=%ld replay=%ld in_progress=%ld mismatch=%ld "
      "lease_lost=%ld stale_calls=%ld purged=%ld prepared=%ld commit_prepared=%ld "
      "rollback_prepared=%ld serialization_failures=%ld (fresh_snapshot=%ld, of which RR=%ld) checkpoints=%ld "
      "completes=%ld releases=%ld commits=%ld rollbacks=%ld savepoint_rollbacks=%ld "
      "waits=%ld lock_probes=%ld",
      step_, statements_, n_acquired_, n_resumed_, n_replay_, n_in_progress_, n_mismatch_, n_lease_lost_, n_stale_,
      n_purged_, n_prepared_, n_commit_prepared_, n_rollback_prepared_, n_serialization_, n_serialization_fresh_,
      n_serialization_fresh_rr_, n_checkpoint_, n_complete_, n_release_, n_commit_, n_rollback_, n_sp_rollback_,
      n_wait_, n_lock_probes_);
  return buf;
}

// ------------------------------------------------------------------------------ set-up

void ModelRun::setup() {
  observer_ = std::make_unique<Connection>(url_);
  const Result has_lease = observer_->exec(
      "SELECT count(*) AS n FROM pg_attribute WHERE attrelid = 'idem.acquire_result'::regclass"
      " AND attname = 'lease_expires_at' AND NOT attisdropped");
  if (has_lease.integer(0, "n") != 1) {
    throw std::runtime_error("idem.acquire_result has no lease_expires_at: the 0.1.1 protocol is not installed");
  }
  const Result version = observer_->exec("SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency'");
  extversion_ = version.text(0, "extversion");
  for (int k = 0; k < kKeys; ++k) {
    KeyInfo info;
    info.tenant = k % 2 == 0 ? "tenant-a" : "tenant-b";
    char name[64];
    std::snprintf(name, sizeof name, "model-key-%02d-0123456789", k / 2);  // the same names in both tenants
    info.name = name;
    const Result r = observer_->exec(
        "SELECT encode(idem.scope_digest($1, '', '', $2), 'hex') AS digest,"
        " idem._lock_key(idem.scope_digest($1, '', '', $2))::text AS lock_key",
        {info.tenant, info.name});
    info.digest_hex = r.text(0, "digest");
    info.lock_key = r.text(0, "lock_key");
    info.handle = info.tenant + ":" + info.digest_hex;
    keys_.push_back(info);
  }
  purge_conn_ = open_session_connection(&purge_pid_);
  for (int i = 0; i < kSessions; ++i) {
    Session s;
    s.name = "s" + std::to_string(i);
    s.conn = open_session_connection(&s.pid);
    sessions_.push_back(std::move(s));
  }
  base_ = server_now();
  std::printf("model: seed=%" PRIu64 " (replay with IDEM_MODEL_SEED=%" PRIu64
              "), %.0f s, pg_idempotency %s,"
              " %d sessions, %d keys, %d payloads per key\n",
              seed_, seed_, seconds_, extversion_.c_str(), kSessions, kKeys, kVariants);
  std::fflush(stdout);
}

std::unique_ptr<Connection> ModelRun::open_session_connection(std::string* pid) {
  auto c = std::make_unique<Connection>(url_);
  c->exec("SET lock_timeout = '2s'");
  c->exec("SET statement_timeout = '10s'");
  c->exec("SELECT idem.fingerprint_scheme()");  // loads the module, so its GUCs exist
  try {
    c->exec("SET idem.wait_timeout = '" + std::to_string(kWaitTimeout / 1000) + "ms'");
  } catch (const DbError& e) {
    throw std::runtime_error(std::string("SET idem.wait_timeout failed (0.1.1 not installed?): ") + e.what());
  }
  *pid = c->exec("SELECT pg_backend_pid()::text AS pid").text(0, "pid");
  return c;
}

// ------------------------------------------------------------------------------ transactions

void ModelRun::begin(Session& s, Isolation iso) {
  must(*s.conn, std::string("BEGIN ISOLATION LEVEL ") + isolation_name(iso), s.name);
  Tx tx;
  tx.serial = ++tx_serial_;
  tx.iso = iso;
  s.tx = std::move(tx);
  if (iso != Isolation::read_committed) {
    must(*s.conn, "SELECT 1", s.name);  // takes the transaction's snapshot now
    s.tx->snapshot = committed_;
  }
  note(txlabel(s) + " BEGIN");
}

void ModelRun::commit(Session& s) {
  const std::string label = txlabel(s);
  Reply r = stmt(*s.conn, "COMMIT");
  if (!r.ok()) {
    if (r.state == "40001" && s.tx->iso == Isolation::serializable) {
      ++n_serialization_;
      note(label + " COMMIT -> 40001 (serialization failure; rolled back)");
      s.tx.reset();
      return;
    }
    violation(label + " COMMIT failed: SQLSTATE " + r.state + ": " + r.error);
  }
  ++n_commit_;
  std::vector<int> ks;
  for (const auto& [k, rec] : s.tx->writes) ks.push_back(k);
  commit_writes(s.tx->writes);
  s.tx.reset();
  note(label + " COMMIT (" + std::to_string(ks.size()) + " keys)");
  cross_check(ks);
}

void ModelRun::rollback(Session& s) {
  const std::string label = txlabel(s);
  must(*s.conn, "ROLLBACK", s.name);
  ++n_rollback_;
  s.tx.reset();
  note(label + " ROLLBACK");
}

// After an error the transaction is aborted: back to the innermost savepoint, or roll back.
void ModelRun::recover_after_error(Session& s) {
  if (!s.tx) return;
  if (!s.tx->block) {
    s.tx.reset();
    return;
  }
  if (!s.tx->frames.empty()) {
    rollback_to(s, s.tx->frames.size() - 1);
  } else {
    rollback(s);
  }
}

void ModelRun::savepoint(Session& s) {
  const std::string name = "sp_" + std::to_string(++sp_serial_);
  must(*s.conn, "SAVEPOINT " + name, s.name);
  s.tx->frames.push_back(Frame{name, s.tx->writes});
  note(txlabel(s) + " SAVEPOINT " + name);
}

void ModelRun::rollback_to(Session& s, std::size_t frame) {
  const std::string name = s.tx->frames[frame].name;
  must(*s.conn, "ROLLBACK TO SAVEPOINT " + name, s.name);
  s.tx->writes = s.tx->frames[frame].writes;
  s.tx->frames.resize(frame + 1);
  ++n_sp_rollback_;
  note(txlabel(s) + " ROLLBACK TO SAVEPOINT " + name);
}

void ModelRun::release_savepoint(Session& s, std::size_t frame) {
  const std::string name = s.tx->frames[frame].name;
  must(*s.conn, "RELEASE SAVEPOINT " + name, s.name);
  s.tx->frames.resize(frame);
  note(txlabel(s) + " RELEASE SAVEPOINT " + name);
}

void ModelRun::prepare(Session& s) {
  const std::string label = txlabel(s);
  const std::string gid = "model_" + std::to_string(::getpid()) + "_" + std::to_string(++gid_serial_);
  Reply r = stmt(*s.conn, "PREPARE TRANSACTION '" + gid + "'");
  if (!r.ok()) {
    if (r.state == "40001" && s.tx->iso == Isolation::serializable) {
      ++n_serialization_;
      note(label + " PREPARE TRANSACTION -> 40001 (rolled back)");
      s.tx.reset();
      return;
    }
    violation(label + " PREPARE TRANSACTION failed: SQLSTATE " + r.state + ": " + r.error);
  }
  ++n_prepared_;
  Prepared p{gid, s.name, std::move(*s.tx)};
  p.tx.frames.clear();
  s.tx.reset();
  note(label + " PREPARE TRANSACTION '" + gid + "' (" + std::to_string(p.tx.writes.size()) + " keys)");
  prepared_.push_back(std::move(p));
}

void ModelRun::finish_prepared(Session& s, std::size_t index, bool commit_it) {
  Prepared p = std::move(prepared_[index]);
  prepared_.erase(prepared_.begin() + static_cast<std::ptrdiff_t>(index));
  must(*s.conn, std::string(commit_it ? "COMMIT" : "ROLLBACK") + " PREPARED '" + p.gid + "'", s.name);
  std::vector<int> ks;
  if (commit_it) {
    ++n_commit_prepared_;
    for (const auto& [k, rec] : p.tx.writes) ks.push_back(k);
    commit_writes(p.tx.writes);
  } else {
    ++n_rollback_prepared_;
  }
  note(s.name + (commit_it ? " COMMIT PREPARED '" : " ROLLBACK PREPARED '") + p.gid + "'");
  cross_check(ks);
}

// ------------------------------------------------------------------------------ the end

void ModelRun::finish() {
  ++step_;
  note("final: finishing every transaction");
  if (purge_open_) purge_finish(true);
  for (Session& s : sessions_) {
    if (s.tx) commit(s);
  }
  while (!prepared_.empty()) finish_prepared(sessions_[0], 0, true);
  cross_check_all();

  // Every committed resolved record that is not history yet replays its bytes.
  Session& s = sessions_[0];
  const Micros now = server_now();
  for (int k = 0; k < kKeys; ++k) {
    const Rec c = committed_[k];
    if (!c.exists || c.status != St::resolved || history_at(c).lo <= now + 200000) continue;
    ++step_;
    const std::string o = acquire(s, k, c.variant, kLeases[0], kTtls[0], false);
    if (o != "replay") violation("final: resolved " + klabel(k) + " answered " + o + ", not replay", k);
  }

  // Past every TTL, purge leaves exactly the records that never become history.
  Micros until = 0;
  for (int k = 0; k < kKeys; ++k) {
    const Window h = history_at(committed_[k]);
    if (h.hi < kNever / 2) until = std::max(until, h.hi);
  }
  for (Micros t = server_now(); t < until + 20000; t = server_now()) {
    std::this_thread::sleep_for(std::chrono::microseconds(until + 20000 - t));
  }
  ++step_;
  note("final: purging");
  for (int i = 0; i < 20; ++i) {
    const long before = n_purged_;
    purge_call(1000);
    if (n_purged_ == before) break;
  }
  for (int k = 0; k < kKeys; ++k) {
    if (committed_[k].exists && history_at(committed_[k]).lo < kNever / 2) {
      violation("final: " + klabel(k) + " survived purge past its history time", k);
    }
  }
  cross_check_all();

  // A purged key starts again above its last generation (rolled back: nothing changes).
  for (int k = 0; k < kKeys; ++k) {
    if (committed_[k].exists || committed_[k].hwm == 0) continue;
    ++step_;
    begin(s, Isolation::read_committed);
    const std::string o = acquire(s, k, k % kVariants, kLeases[0], kTtls[0], false);
    if (o != "acquired") violation("final: purged " + klabel(k) + " answered " + o + ", not acquired", k);
    rollback(s);
  }
}

}  // namespace idem::it::model
