// A randomized, model-based test of the acquisition protocol (0.1.1) on real connections.
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
//   IDEM_MODEL_SECONDS=600 IDEM_TEST_URL=$(scripts/pg.sh url) build/integration_tests --gtest_filter='ProtocolModel.*'
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/integration/pq.hpp"

namespace idem::it {
namespace {

using Clock = std::chrono::steady_clock;
using Micros = std::int64_t;  // server time, microseconds since the Unix epoch

constexpr Micros kNever = std::numeric_limits<Micros>::max() / 4;
constexpr Micros kSlack = 2000;  // a boundary this close to a call's window accepts either answer
constexpr int kSessions = 6;
constexpr int kKeyNames = 6;
constexpr int kKeys = kKeyNames * 2;  // each name under two tenants: 12 records
constexpr int kVariants = 3;
constexpr int kMaxPrepared = 3;       // max_prepared_transactions is 10 on the test cluster
constexpr int kMaxTxSteps = 12;       // a transaction this old is committed or rolled back
constexpr int kMaxPurgeTxSteps = 25;  // global steps a purge transaction may stay open
constexpr std::int64_t kStaleOffset = 1000000000;
constexpr Micros kWaitTimeout = 200 * 1000;  // SET idem.wait_timeout in every session
constexpr double kNoWaitSeconds = 1.0;       // a call that must not wait, taking longer, waited
constexpr double kDefaultSeconds = 20;
const Micros kLeases[] = {150000, 300000, 1000000, 2000000};
const Micros kTtls[] = {150000, 400000, 1500000};

// ---------------------------------------------------------------------------------------------
// The model of one key's record.

enum class St { in_progress, resolved, released };

const char* st_name(St s) {
  switch (s) {
    case St::in_progress:
      return "in_progress";
    case St::resolved:
      return "resolved";
    case St::released:
      return "released";
  }
  return "?";
}

struct Response {
  int status = 0;
  std::string headers;  // jsonb's text form
  std::string body;     // raw bytes
  std::optional<std::string> order_id;
  bool operator==(const Response& o) const {
    return status == o.status && headers == o.headers && body == o.body && order_id == o.order_id;
  }
};

struct Rec {
  bool exists = false;
  St status = St::in_progress;
  std::int64_t attempt = 0;
  int gen = 0;
  int variant = -1;
  Micros lease = 0, ttl = 0;      // of the grant that created, restarted or took over the record
  Micros lease_end = 0;           // in_progress: the lease expiry (acquire or last checkpoint)
  Micros end_lo = 0, end_hi = 0;  // resolved/released: the window of the complete/release call
  bool checkpointed = false;
  std::optional<std::string> rp, rdata;
  Response resp;
  int hwm = 0;            // the highest committed generation of the key, kept across purge
  std::uint64_t ver = 0;  // bumped by every committed change (snapshot staleness)
};

struct Window {
  Micros lo, hi;
};

// When the record becomes history (bounds: the complete/release time is known to a window).
Window history_at(const Rec& r) {
  if (!r.exists) return {kNever, kNever};
  switch (r.status) {
    case St::in_progress:
      if (r.checkpointed) return {kNever, kNever};
      return {r.lease_end + r.ttl, r.lease_end + r.ttl};
    case St::resolved:
      return {r.end_lo + r.ttl, r.end_hi + r.ttl};
    case St::released:
      if (r.checkpointed) return {kNever, kNever};
      return {r.end_lo + r.ttl, r.end_hi + r.ttl};
  }
  return {kNever, kNever};
}

// ---------------------------------------------------------------------------------------------
// Sessions, transactions, prepared transactions.

struct Frame {
  std::string name;
  std::map<int, Rec> writes;  // the overlay when the savepoint was set
};

struct Tx {
  int serial = 0;
  Isolation iso = Isolation::read_committed;
  bool block = true;                         // false: a single autocommit statement
  std::map<int, Rec> writes;                 // what this transaction wrote (it holds these keys)
  std::optional<std::vector<Rec>> snapshot;  // REPEATABLE READ / SERIALIZABLE: committed state then
  std::vector<Frame> frames;
  int steps = 0;
};

struct Session {
  std::string name;
  std::unique_ptr<Connection> conn;
  std::string pid;
  std::optional<Tx> tx;
};

struct Prepared {
  std::string gid;
  std::string from;
  Tx tx;
};

struct KeyInfo {
  std::string tenant;
  std::string name;
  std::string digest_hex;
  std::string handle;
  std::string lock_key;
};

const char* iso_short(Isolation i) {
  switch (i) {
    case Isolation::read_committed:
      return "RC";
    case Isolation::repeatable_read:
      return "RR";
    case Isolation::serializable:
      return "SER";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// SQL. Every protocol call is bracketed by clock_timestamp() in the same statement (the target
// list is evaluated in order; OFFSET 0 keeps the call in its own subquery, evaluated once).

const std::string kAcquire =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (s.r).outcome AS outcome, (s.r).handle AS handle, (s.r).attempt AS attempt, (s.r).generation AS generation,"
    " (s.r).recovery_point AS recovery_point, (s.r).recovery_data::text AS recovery_data,"
    " (s.r).response_status AS response_status, (s.r).response_headers::text AS response_headers,"
    " (s.r).response_body AS response_body, (s.r).order_id AS order_id, (s.r).retry_after AS retry_after,"
    " (extract(epoch FROM (s.r).lease_expires_at) * 1000000)::bigint AS lease_end"
    " FROM (SELECT clock_timestamp() AS t0,"
    " idem.acquire($1, $2, $3::jsonb, lease => $4::interval, ttl => $5::interval, on_busy => $6) AS r,"
    " clock_timestamp() AS t1 OFFSET 0) s";
const std::string kCheckpoint =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (extract(epoch FROM s.v) * 1000000)::bigint AS v"
    " FROM (SELECT clock_timestamp() AS t0, idem.checkpoint($1, $2::bigint, $3, $4::jsonb) AS v,"
    " clock_timestamp() AS t1 OFFSET 0) s";
const std::string kComplete =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (s.v IS NULL) AS v"
    " FROM (SELECT clock_timestamp() AS t0, idem.complete($1, $2::bigint, $3::int, $4::jsonb, $5::bytea, $6) AS v,"
    " clock_timestamp() AS t1 OFFSET 0) s";
const std::string kRelease =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " (s.v IS NULL) AS v"
    " FROM (SELECT clock_timestamp() AS t0, idem.release($1, $2::bigint, $3) AS v, clock_timestamp() AS t1 OFFSET 0) s";
const std::string kPurge =
    "SELECT (extract(epoch FROM s.t0) * 1000000)::bigint AS t0, (extract(epoch FROM s.t1) * 1000000)::bigint AS t1,"
    " s.v AS n FROM (SELECT clock_timestamp() AS t0, idem.purge_expired($1::int) AS v,"
    " clock_timestamp() AS t1 OFFSET 0) s";
const std::string kRows =
    "SELECT tenant_id, encode(scope_digest, 'hex') AS digest, status, attempt, generation FROM idem.keys";
const std::string kRowText =
    "SELECT k::text AS row FROM idem.keys k WHERE k.tenant_id = $1 AND k.scope_digest = decode($2, 'hex')";
const std::string kAdvisoryHeld =
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = $1::int AND objsubid = 1"
    " AND ((classid::bigint << 32) | objid::bigint) = $2::bigint";
const std::string kRowLockProbe =
    "SELECT 1 FROM idem.keys WHERE tenant_id = $1 AND scope_digest = decode($2, 'hex') FOR UPDATE NOWAIT";
const std::string kServerNow = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now";

// A statement's answer: rows, or the error's SQLSTATE; and how long it took on the client.
struct Reply {
  std::optional<Result> rows;
  std::string state;
  std::string error;
  double seconds = 0;
  bool ok() const { return rows.has_value(); }
};

Reply call(Connection& c, const std::string& sql, const Params& params = {}) {
  Reply out;
  const auto start = Clock::now();
  try {
    out.rows.emplace(c.exec(sql, params));
  } catch (const DbError& e) {
    out.state = e.in_doubt() ? "in-doubt" : e.sqlstate();
    out.error = e.what();
    if (out.state.empty()) out.state = "(none)";
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

std::optional<std::string> opt_text(const Result& r, const char* column) {
  if (r.is_null(0, column)) return std::nullopt;
  return r.text(0, column);
}

std::optional<std::int64_t> opt_int(const Result& r, const char* column) {
  if (r.is_null(0, column)) return std::nullopt;
  return std::stoll(r.text(0, column));
}

std::string interval_of(Micros us) { return std::to_string(us / 1000) + " milliseconds"; }

std::string printable(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string opt_str(const std::optional<std::string>& s) { return s ? "'" + printable(*s) + "'" : "NULL"; }

std::string describe(const Response& r) {
  return "status=" + std::to_string(r.status) + " headers=" + r.headers + " body='" + printable(r.body) +
         "' order_id=" + opt_str(r.order_id);
}

struct AcquireRow {
  std::string outcome, handle;
  std::optional<std::int64_t> attempt, generation, retry_after, lease_end;
  std::optional<std::string> rp, rdata;
  std::optional<Response> resp;  // set when response_status is not NULL
  bool any_response_column = false;
  Micros t0 = 0, t1 = 0;
};

AcquireRow parse_acquire(const Result& r) {
  AcquireRow a;
  a.t0 = std::stoll(r.text(0, "t0"));
  a.t1 = std::stoll(r.text(0, "t1"));
  a.outcome = r.text(0, "outcome");
  a.handle = r.is_null(0, "handle") ? "" : r.text(0, "handle");
  a.attempt = opt_int(r, "attempt");
  a.generation = opt_int(r, "generation");
  a.retry_after = opt_int(r, "retry_after");
  a.lease_end = opt_int(r, "lease_end");
  a.rp = opt_text(r, "recovery_point");
  a.rdata = opt_text(r, "recovery_data");
  a.any_response_column = !r.is_null(0, "response_status") || !r.is_null(0, "response_headers") ||
                          !r.is_null(0, "response_body") || !r.is_null(0, "order_id");
  if (!r.is_null(0, "response_status")) {
    Response resp;
    resp.status = r.integer(0, "response_status");
    resp.headers = r.is_null(0, "response_headers") ? "<NULL>" : r.text(0, "response_headers");
    resp.body = r.is_null(0, "response_body") ? "<NULL>" : r.bytes(0, "response_body");
    resp.order_id = opt_text(r, "order_id");
    a.resp = resp;
  }
  return a;
}

// What the contract allows an acquire to answer.
struct Expect {
  std::string outcome;                   // an outcome, or "40001"
  int gen = -1;                          // -1: not checked
  bool write = false;                    // needs to write the record (so the key's lock)
  std::optional<std::string> rp, rdata;  // resumed
  std::optional<Response> resp;          // replay
  std::string why;
};

class ModelViolation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Draw = std::array<std::uint64_t, 12>;

// ---------------------------------------------------------------------------------------------

class ModelRun {
 public:
  ModelRun(const std::string& url, std::uint64_t seed, double seconds, long max_ops)
      : url_(url), seed_(seed), seconds_(seconds), max_ops_(max_ops), rng_(seed), committed_(kKeys) {}

  void run() {
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

  std::string summary() const {
    char head[160];
    const double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    std::snprintf(head, sizeof head, "model: seed=%" PRIu64 " seconds=%.1f ", seed_, seconds);
    return head + counters();
  }

  std::string counters() const {
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

 private:
  // ------------------------------------------------------------------------------ set-up

  void setup() {
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

  std::unique_ptr<Connection> open_session_connection(std::string* pid) {
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

  Micros server_now() { return std::stoll(observer_->exec(kServerNow).text(0, "now")); }

  // ------------------------------------------------------------------------------ reporting

  std::string rel(Micros t) const {
    if (t >= kNever / 2) return "never";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1fms", static_cast<double>(t - base_) / 1000.0);
    return buf;
  }

  std::string klabel(int k) const {
    return "k" + std::to_string(k) + " (" + keys_[k].tenant + "/" + keys_[k].name + ")";
  }

  std::string describe(const Rec& r) const {
    if (!r.exists) return "absent (generation high-water mark " + std::to_string(r.hwm) + ")";
    const Window h = history_at(r);
    std::string s = std::string(st_name(r.status)) + " gen=" + std::to_string(r.gen) +
                    " attempt=" + std::to_string(r.attempt) + " payload=v" + std::to_string(r.variant) +
                    " lease=" + std::to_string(r.lease / 1000) + "ms ttl=" + std::to_string(r.ttl / 1000) + "ms";
    if (r.status == St::in_progress) s += " lease_end=" + rel(r.lease_end);
    if (r.status != St::in_progress) s += " ended=[" + rel(r.end_lo) + "," + rel(r.end_hi) + "]";
    s += " checkpoint=" + (r.checkpointed ? opt_str(r.rp) + " data=" + opt_str(r.rdata) : std::string("none"));
    if (r.status == St::resolved) s += " response{" + idem::it::describe(r.resp) + "}";
    s += " history=[" + rel(h.lo) + "," + rel(h.hi) + "] ver=" + std::to_string(r.ver);
    return s;
  }

  std::string describe_key(int k) const {
    std::string s = "  committed: " + describe(committed_[k]) + "\n";
    for (const Session& o : sessions_) {
      if (!o.tx) continue;
      const auto it = o.tx->writes.find(k);
      if (it != o.tx->writes.end()) {
        s += "  open in " + o.name + " tx" + std::to_string(o.tx->serial) + ": " + describe(it->second) + "\n";
      }
      if (o.tx->snapshot && it == o.tx->writes.end()) {
        const Rec& snap = (*o.tx->snapshot)[k];
        if (snap.ver != committed_[k].ver) {
          s += "  snapshot of " + o.name + " tx" + std::to_string(o.tx->serial) + ": " + describe(snap) + "\n";
        }
      }
    }
    for (const Prepared& p : prepared_) {
      const auto it = p.tx.writes.find(k);
      if (it != p.tx.writes.end())
        s += "  prepared " + p.gid + " (from " + p.from + "): " + describe(it->second) + "\n";
    }
    if (purge_deleted_.count(k)) s += "  deleted by the open purge transaction\n";
    return s;
  }

  void note(const std::string& line) {
    trace_.push_back("step " + std::to_string(step_) + ": " + line);
    if (trace_.size() > 80) trace_.pop_front();
  }

  [[noreturn]] void violation(const std::string& what, int k = -1) {
    std::string msg =
        "model violation at step " + std::to_string(step_) + " (seed=" + std::to_string(seed_) + "): " + what + "\n";
    if (k >= 0) msg += "state of " + klabel(k) + ":\n" + describe_key(k);
    msg += "last steps:\n";
    for (const auto& line : trace_) msg += "  " + line + "\n";
    msg += counters() + "\nreplay with IDEM_MODEL_SEED=" + std::to_string(seed_);
    throw ModelViolation(msg);
  }

  // ------------------------------------------------------------------------------ model queries

  const Rec& visible(const Session& s, int k) const {
    if (s.tx) {
      const auto it = s.tx->writes.find(k);
      if (it != s.tx->writes.end()) return it->second;
      if (s.tx->snapshot) return (*s.tx->snapshot)[k];
    }
    return committed_[k];
  }

  bool owns(const Session& s, int k) const { return s.tx && s.tx->writes.count(k) > 0; }

  // A snapshot older than the last committed change of the key (a write must fail with 40001).
  bool snapshot_stale(const Session& s, int k) const {
    return s.tx && s.tx->snapshot && !owns(s, k) && (*s.tx->snapshot)[k].ver != committed_[k].ver;
  }

  // Who else holds the key: another session's open transaction, a prepared transaction, or the
  // open purge transaction that deleted its record. "" when nobody.
  std::string locker(const Session* s, int k, bool include_purge = true) const {
    for (const Session& o : sessions_) {
      if (&o == s || !o.tx) continue;
      if (o.tx->writes.count(k)) return o.name + " tx" + std::to_string(o.tx->serial);
    }
    for (const Prepared& p : prepared_) {
      if (p.tx.writes.count(k)) return "prepared " + p.gid;
    }
    if (include_purge && purge_deleted_.count(k)) return "the open purge transaction";
    return "";
  }

  Rec& writable(Session& s, int k) {
    auto it = s.tx->writes.find(k);
    if (it == s.tx->writes.end()) it = s.tx->writes.emplace(k, visible(s, k)).first;
    return it->second;
  }

  // ------------------------------------------------------------------------------ statements

  Reply stmt(Connection& c, const std::string& sql, const Params& params = {}) {
    ++statements_;
    return call(c, sql, params);
  }

  Result must(Connection& c, const std::string& sql, const std::string& who, const Params& params = {}) {
    Reply r = stmt(c, sql, params);
    if (!r.ok())
      violation(who + ": " + sql.substr(0, 60) + " failed unexpectedly: SQLSTATE " + r.state + ": " + r.error);
    return std::move(*r.rows);
  }

  std::string txlabel(const Session& s) const {
    if (!s.tx) return s.name + " autocommit";
    return s.name + " tx" + std::to_string(s.tx->serial) + "[" + iso_short(s.tx->iso) + (s.tx->block ? "" : ",auto") +
           (s.tx->frames.empty() ? "" : ",sp" + std::to_string(s.tx->frames.size())) + "]";
  }

  void commit_writes(const std::map<int, Rec>& writes) {
    for (const auto& [k, r] : writes) {
      Rec c = r;
      c.hwm = std::max(committed_[k].hwm, r.exists ? r.gen : 0);
      c.ver = committed_[k].ver + 1;
      if (c.exists && c.status == St::resolved) responses_[k][c.gen] = c.resp;
      committed_[k] = std::move(c);
    }
  }

  std::map<std::string, std::array<std::string, 3>> read_rows(Connection& c) {
    const Result rows = must(c, kRows, "reading idem.keys");
    std::map<std::string, std::array<std::string, 3>> out;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out[rows.text(i, "tenant_id") + ":" + rows.text(i, "digest")] = {rows.text(i, "status"), rows.text(i, "attempt"),
                                                                       rows.text(i, "generation")};
    }
    return out;
  }

  // idem.keys (read from a separate connection) agrees with the committed model.
  void cross_check(const std::vector<int>& ks) {
    const auto rows = read_rows(*observer_);
    for (int k : ks) {
      const Rec& m = committed_[k];
      const auto it = rows.find(keys_[k].handle);
      if (!m.exists && it == rows.end()) continue;
      if (m.exists != (it != rows.end())) {
        violation(std::string("idem.keys disagrees with the committed model for ") + klabel(k) + ": model " +
                      (m.exists ? "has a record" : "has none") + ", idem.keys " +
                      (it != rows.end() ? "has " + it->second[0] + " gen " + it->second[2] : std::string("has none")),
                  k);
      }
      const auto& [status, attempt, gen] = it->second;
      if (status != st_name(m.status) || attempt != std::to_string(m.attempt) || gen != std::to_string(m.gen)) {
        violation("idem.keys disagrees with the committed model for " + klabel(k) + ": row " + status + " attempt " +
                      attempt + " gen " + gen,
                  k);
      }
    }
  }

  void cross_check_all() {
    std::vector<int> all(kKeys);
    for (int k = 0; k < kKeys; ++k) all[k] = k;
    cross_check(all);
  }

  // ------------------------------------------------------------------------------ transactions

  void begin(Session& s, Isolation iso) {
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

  void commit(Session& s) {
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

  void rollback(Session& s) {
    const std::string label = txlabel(s);
    must(*s.conn, "ROLLBACK", s.name);
    ++n_rollback_;
    s.tx.reset();
    note(label + " ROLLBACK");
  }

  // After an error the transaction is aborted: back to the innermost savepoint, or roll back.
  void recover_after_error(Session& s) {
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

  void savepoint(Session& s) {
    const std::string name = "sp_" + std::to_string(++sp_serial_);
    must(*s.conn, "SAVEPOINT " + name, s.name);
    s.tx->frames.push_back(Frame{name, s.tx->writes});
    note(txlabel(s) + " SAVEPOINT " + name);
  }

  void rollback_to(Session& s, std::size_t frame) {
    const std::string name = s.tx->frames[frame].name;
    must(*s.conn, "ROLLBACK TO SAVEPOINT " + name, s.name);
    s.tx->writes = s.tx->frames[frame].writes;
    s.tx->frames.resize(frame + 1);
    ++n_sp_rollback_;
    note(txlabel(s) + " ROLLBACK TO SAVEPOINT " + name);
  }

  void release_savepoint(Session& s, std::size_t frame) {
    const std::string name = s.tx->frames[frame].name;
    must(*s.conn, "RELEASE SAVEPOINT " + name, s.name);
    s.tx->frames.resize(frame);
    note(txlabel(s) + " RELEASE SAVEPOINT " + name);
  }

  void prepare(Session& s) {
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

  void finish_prepared(Session& s, std::size_t index, bool commit_it) {
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

  // ------------------------------------------------------------------------------ acquire

  std::vector<Expect> base_outcomes(const Rec& v, bool own, int variant, Micros t0, Micros t1) const {
    std::vector<Expect> out;
    if (!v.exists) {
      out.push_back(Expect{"acquired", v.hwm + 1, true, {}, {}, {}, "no record"});
      return out;
    }
    const Window h = history_at(v);
    if (h.lo <= t1 + kSlack) out.push_back(Expect{"acquired", v.gen + 1, true, {}, {}, {}, "history"});
    if (own && v.status == St::in_progress) {
      // The contract names both rules (history -> a new generation; this transaction's own
      // in_progress record -> in_progress) without ranking them: either answer is accepted.
      out.push_back(Expect{"in_progress", -1, false, {}, {}, {}, "written by this transaction"});
      return out;
    }
    if (h.hi > t0 - kSlack) {
      const bool same = variant == v.variant;
      switch (v.status) {
        case St::resolved:
          if (same) {
            out.push_back(Expect{"replay", v.gen, false, {}, {}, v.resp, "resolved, same payload"});
          } else {
            out.push_back(Expect{"mismatch", v.gen, false, {}, {}, {}, "resolved, other payload"});
          }
          break;
        case St::in_progress:
          if (v.lease_end > t0 - kSlack) out.push_back(Expect{"in_progress", -1, false, {}, {}, {}, "live lease"});
          if (v.lease_end <= t1 + kSlack) {
            if (same) {
              out.push_back(Expect{"resumed", v.gen, true, v.rp, v.rdata, {}, "expired lease, same payload"});
            } else {
              out.push_back(Expect{"mismatch", v.gen, false, {}, {}, {}, "expired lease, other payload"});
            }
          }
          break;
        case St::released:
          if (v.checkpointed) {
            if (same) {
              out.push_back(Expect{"resumed", v.gen, true, v.rp, v.rdata, {}, "released after a checkpoint"});
            } else {
              out.push_back(Expect{"mismatch", v.gen, false, {}, {}, {}, "released after a checkpoint, other payload"});
            }
          } else {
            out.push_back(Expect{"acquired", v.gen, true, {}, {}, {}, "released without a checkpoint"});
          }
          break;
      }
    }
    return out;
  }

  std::vector<Expect> predict_acquire(const Session& s, int k, int variant, Micros t0, Micros t1) const {
    const std::string held_by = locker(&s, k);
    const bool stale = snapshot_stale(s, k);
    std::vector<Expect> out;
    for (Expect& e : base_outcomes(visible(s, k), owns(s, k), variant, t0, t1)) {
      if (e.write && (!held_by.empty() || stale)) {
        if (!held_by.empty())
          out.push_back(Expect{"in_progress", -1, false, {}, {}, {}, "would write; key held by " + held_by});
        if (stale)
          out.push_back(
              Expect{"40001", -1, false, {}, {}, {}, "would write; snapshot older than the key's last commit"});
        continue;
      }
      const bool refusal = e.outcome == "replay" || e.outcome == "mismatch";
      out.push_back(e);
      if (refusal && !held_by.empty()) {
        out.push_back(
            Expect{"in_progress", -1, false, {}, {}, {}, "key locked by " + held_by + " (fingerprint not compared)"});
      }
    }
    if (s.tx && s.tx->iso != Isolation::read_committed) {
      out.push_back(Expect{"40001", -1, false, {}, {}, {}, "allowed under REPEATABLE READ / SERIALIZABLE"});
    }
    return out;
  }

  static std::string describe(const std::vector<Expect>& es) {
    std::string s;
    for (const Expect& e : es) {
      if (!s.empty()) s += " | ";
      s += e.outcome;
      if (e.gen >= 0) s += " gen " + std::to_string(e.gen);
      if (e.outcome == "resumed") s += " rp " + opt_str(e.rp) + " data " + opt_str(e.rdata);
      if (e.resp) s += " {" + idem::it::describe(*e.resp) + "}";
      s += " (" + e.why + ")";
    }
    return s;
  }

  static bool matches(const Expect& e, const AcquireRow& a) {
    if (e.outcome != a.outcome) return false;
    if (e.gen >= 0 && (!a.generation || *a.generation != e.gen)) return false;
    if (e.outcome == "resumed") return a.rp == e.rp && a.rdata == e.rdata;
    if (e.outcome == "replay") return a.resp && e.resp && *a.resp == *e.resp;
    return true;
  }

  std::string payload(int k, int variant) const {
    return R"({"amount": )" + std::to_string(100 * (k + 1) + variant) + R"(, "currency": "EUR", "variant": )" +
           std::to_string(variant) + "}";
  }

  // Returns the outcome ("" after an error).
  std::string acquire(Session& s, int k, int variant, Micros lease, Micros ttl, bool wait) {
    const bool autocommit = !s.tx;
    if (autocommit) {
      Tx tx;
      tx.serial = ++tx_serial_;
      tx.block = false;
      s.tx = std::move(tx);
    }
    const std::string label = txlabel(s);
    const Isolation iso = s.tx->iso;
    const std::string what = label + " acquire " + klabel(k) + " v" + std::to_string(variant) +
                             " lease=" + std::to_string(lease / 1000) + "ms ttl=" + std::to_string(ttl / 1000) + "ms " +
                             (wait ? "wait" : "reject");
    if (wait) ++n_wait_;
    Reply r = stmt(*s.conn, kAcquire,
                   {keys_[k].tenant, keys_[k].name, payload(k, variant), interval_of(lease), interval_of(ttl),
                    std::string(wait ? "wait" : "reject")});

    // 5. Never waits on a lock; wait mode polls at most idem.wait_timeout, under READ COMMITTED.
    const double wait_limit = static_cast<double>(kWaitTimeout) / 1e6;
    const double limit = wait && iso == Isolation::read_committed ? wait_limit + kNoWaitSeconds : kNoWaitSeconds;
    if (r.state == "55P03") violation("invariant 5: " + what + " waited for a lock (55P03 under lock_timeout)", k);
    if (r.state == "57014") violation("invariant 5: " + what + " hit statement_timeout (it hung)", k);
    if (r.seconds > limit) {
      violation("invariant 5: " + what + " took " + std::to_string(r.seconds) + " s (limit " + std::to_string(limit) +
                    " s)" + (r.ok() ? "" : ", then SQLSTATE " + r.state),
                k);
    }

    if (!r.ok()) {
      if (r.state == "23505") violation("acquire raised 23505 (unique violation): " + what + ": " + r.error, k);
      if (r.state == "40001" && iso != Isolation::read_committed) {
        ++n_serialization_;
        if (!snapshot_stale(s, k)) {
          ++n_serialization_fresh_;
          if (iso == Isolation::repeatable_read) ++n_serialization_fresh_rr_;
        }
        note(what + " -> 40001" + (snapshot_stale(s, k) ? " (stale snapshot)" : ""));
        recover_after_error(s);
        return "";
      }
      violation(what + " failed: SQLSTATE " + r.state + ": " + r.error, k);
    }
    const AcquireRow a = parse_acquire(*r.rows);
    std::string got = a.outcome;
    if (a.generation) got += " gen=" + std::to_string(*a.generation);
    if (a.attempt) got += " attempt=" + std::to_string(*a.attempt);
    if (a.lease_end) got += " lease_end=" + rel(*a.lease_end);
    if (a.rp) got += " rp=" + opt_str(a.rp);
    note(what + " -> " + got + " [" + rel(a.t0) + "," + rel(a.t1) + "] " +
         std::to_string(r.seconds * 1000).substr(0, 6) + "ms");

    const bool granted = a.outcome == "acquired" || a.outcome == "resumed";
    if (a.handle != keys_[k].handle) violation(what + ": handle " + a.handle + ", expected " + keys_[k].handle, k);
    if (granted) {
      if (!a.attempt || !a.generation || !a.lease_end)
        violation(what + ": " + a.outcome + " without attempt/generation/lease_expires_at", k);
      // 6. fencing tokens always grow (one global sequence; the driver is one thread)
      if (*a.attempt <= max_attempt_) {
        violation("invariant 6: " + what + ": attempt " + std::to_string(*a.attempt) +
                      " is not above the last issued " + std::to_string(max_attempt_),
                  k);
      }
      max_attempt_ = *a.attempt;
      if (*a.lease_end - lease < a.t0 - kSlack || *a.lease_end - lease > a.t1 + kSlack) {
        violation(what + ": lease_expires_at " + rel(*a.lease_end) + " is not the call's time + lease (call ran " +
                      rel(a.t0) + ".." + rel(a.t1) + ")",
                  k);
      }
      if (a.any_response_column) violation(what + ": " + a.outcome + " carries response columns", k);
      check_single_holder(s, k, a, what);
    } else {
      if (a.lease_end) violation(what + ": lease_expires_at is not NULL for " + a.outcome, k);
      if (a.outcome == "in_progress" && !a.retry_after) violation(what + ": in_progress without retry_after", k);
    }
    // 6. the generation never decreases
    if (a.generation) {
      const Rec& v = visible(s, k);
      const int floor_gen = v.exists ? v.gen : v.hwm;
      const int floor_latest =
          granted ? std::max(floor_gen, committed_[k].exists ? committed_[k].gen : committed_[k].hwm) : floor_gen;
      if (*a.generation < floor_latest) {
        violation("invariant 6: " + what + ": generation " + std::to_string(*a.generation) + " is below " +
                      std::to_string(floor_latest),
                  k);
      }
    }
    // 3. replayed bytes equal the completed bytes
    if (a.outcome == "replay") {
      if (!a.resp || !a.generation) violation("invariant 3: " + what + ": replay without a response or generation", k);
      const Response* sent = nullptr;
      const Rec& v = visible(s, k);
      if (owns(s, k) && v.exists && v.status == St::resolved && v.gen == *a.generation) sent = &v.resp;
      if (!sent) {
        const auto it = responses_[k].find(static_cast<int>(*a.generation));
        if (it != responses_[k].end()) sent = &it->second;
      }
      if (!sent)
        violation("invariant 3: " + what + ": replay of generation " + std::to_string(*a.generation) +
                      " that was never completed",
                  k);
      if (!(*sent == *a.resp)) {
        violation("invariant 3: " + what + ": replayed {" + idem::it::describe(*a.resp) +
                      "} but the complete stored {" + idem::it::describe(*sent) + "}",
                  k);
      }
    }
    // The whole answer is one the contract allows from the model's state.
    const std::vector<Expect> allowed = predict_acquire(s, k, variant, a.t0, a.t1);
    bool ok = false;
    for (const Expect& e : allowed) ok = ok || matches(e, a);
    if (!ok) {
      std::string seen = a.outcome + " gen " + (a.generation ? std::to_string(*a.generation) : "NULL");
      if (a.outcome == "resumed") seen += " rp " + opt_str(a.rp) + " data " + opt_str(a.rdata);
      if (a.resp) seen += " {" + idem::it::describe(*a.resp) + "}";
      violation("model: " + what + " answered " + seen + " in [" + rel(a.t0) + "," + rel(a.t1) +
                    "]; the contract allows: " + describe(allowed),
                k);
    }
    // wait mode: polls under READ COMMITTED, answers at once otherwise
    if (wait && a.outcome == "in_progress" && !owns(s, k)) {
      if (iso != Isolation::read_committed && r.seconds * 1e6 >= static_cast<double>(kWaitTimeout)) {
        violation("invariant 5: " + what + " polled " + std::to_string(r.seconds) + " s under " + isolation_name(iso) +
                      " (on_busy => 'wait' waits only under READ COMMITTED)",
                  k);
      }
      const Rec& v = visible(s, k);
      const bool busy_throughout =
          !locker(&s, k).empty() || (v.exists && v.status == St::in_progress && v.lease_end > a.t1 + kSlack);
      if (iso == Isolation::read_committed && busy_throughout &&
          r.seconds * 1e6 < 0.75 * static_cast<double>(kWaitTimeout)) {
        violation("invariant 5: on_busy => 'wait' under READ COMMITTED answered in_progress after " +
                      std::to_string(r.seconds) + " s, without polling for idem.wait_timeout (" +
                      std::to_string(kWaitTimeout / 1000) + " ms): " + what,
                  k);
      }
    }
    count_outcome(a.outcome);

    if (granted) {
      Rec& w = writable(s, k);
      if (a.outcome == "acquired") {
        w.exists = true;
        w.gen = static_cast<int>(*a.generation);
        w.variant = variant;
        w.checkpointed = false;
        w.rp.reset();
        w.rdata.reset();
        w.resp = Response{};
        w.end_lo = w.end_hi = 0;
      }
      w.status = St::in_progress;
      w.attempt = *a.attempt;
      w.lease = lease;
      w.ttl = ttl;
      w.lease_end = *a.lease_end;
      w.hwm = std::max(w.hwm, w.gen);
      auto& seen = attempts_[k];
      seen.push_back(*a.attempt);
      if (seen.size() > 16) seen.erase(seen.begin());
    } else if (s.tx->block && !owns(s, k)) {
      probe_no_lock(s, k, what);
    }
    if (autocommit) {
      std::vector<int> ks;
      for (const auto& [key, rec] : s.tx->writes) ks.push_back(key);
      commit_writes(s.tx->writes);
      s.tx.reset();
      cross_check(ks);
    }
    return a.outcome;
  }

  void count_outcome(const std::string& o) {
    if (o == "acquired")
      ++n_acquired_;
    else if (o == "resumed")
      ++n_resumed_;
    else if (o == "replay")
      ++n_replay_;
    else if (o == "in_progress")
      ++n_in_progress_;
    else if (o == "mismatch")
      ++n_mismatch_;
  }

  // Invariants 1 and 2 for a grant (acquired/resumed) of key k.
  void check_single_holder(const Session& s, int k, const AcquireRow& a, const std::string& what) {
    const int g = static_cast<int>(*a.generation);
    // What the grant replaced: this transaction's own version, else the latest committed one.
    const Rec& base = owns(s, k) ? s.tx->writes.at(k) : committed_[k];
    if (base.exists && base.status == St::in_progress && base.attempt != *a.attempt && base.lease_end > a.t1 + kSlack) {
      violation("invariant 1: " + what + " got " + a.outcome + " (attempt " + std::to_string(*a.attempt) +
                    ") while attempt " + std::to_string(base.attempt) + " (gen " + std::to_string(base.gen) +
                    ") holds a live lease until " + rel(base.lease_end),
                k);
    }
    for (const Session& o : sessions_) {
      if (&o == &s || !o.tx) continue;
      const auto it = o.tx->writes.find(k);
      if (it != o.tx->writes.end()) {
        violation("invariant 1: " + what + " got " + a.outcome + " while " + o.name + " tx" +
                      std::to_string(o.tx->serial) + " holds the key in its open transaction (" + describe(it->second) +
                      ")",
                  k);
      }
    }
    for (const Prepared& p : prepared_) {
      const auto it = p.tx.writes.find(k);
      if (it != p.tx.writes.end()) {
        violation("invariant 1: " + what + " got " + a.outcome + " while prepared transaction " + p.gid +
                      " holds the key (" + describe(it->second) + ")",
                  k);
      }
    }
    if (purge_deleted_.count(k)) {
      violation("invariant 1: " + what + " got " + a.outcome + " for a record the open purge transaction deleted", k);
    }
    if (base.exists && base.gen == g) {
      const bool freed =
          base.status == St::released || (base.status == St::in_progress && base.lease_end <= a.t1 + kSlack);
      if (!freed) {
        violation("invariant 2: " + what + " got a second " + a.outcome + " in generation " + std::to_string(g) +
                      " although the previous grant (attempt " + std::to_string(base.attempt) + ", " +
                      st_name(base.status) + ") neither expired nor was released",
                  k);
      }
    }
  }

  // 7. A refused acquire leaves no advisory lock and no row lock (probed from another connection).
  void probe_no_lock(const Session& s, int k, const std::string& what) {
    ++n_lock_probes_;
    const Result held = must(*observer_, kAdvisoryHeld, "lock probe", {s.pid, keys_[k].lock_key});
    if (held.integer(0, "n") != 0) {
      violation("invariant 7: after " + what + " the session (pid " + s.pid + ") still holds the key's advisory lock",
                k);
    }
    if (!locker(&s, k).empty()) return;  // a legitimate holder locks the row: nothing to learn
    Reply probe = stmt(*observer_, kRowLockProbe, {keys_[k].tenant, keys_[k].digest_hex});
    if (probe.state == "55P03") {
      violation("invariant 7: after " + what +
                    " the record's row is locked (FOR UPDATE NOWAIT failed) and no other "
                    "transaction holds the key",
                k);
    }
    if (!probe.ok()) violation("row-lock probe failed: SQLSTATE " + probe.state + ": " + probe.error, k);
  }

  // ------------------------------------------------------------------------------ holder calls

  enum class Call { checkpoint, complete, release };

  static const char* call_name(Call c) {
    switch (c) {
      case Call::checkpoint:
        return "checkpoint";
      case Call::complete:
        return "complete";
      case Call::release:
        return "release";
    }
    return "?";
  }

  struct HolderExpect {
    bool ok = false, lost = false, serial = false;
    std::string why;
  };

  HolderExpect predict_holder(const Session& s, int k, std::int64_t attempt, Micros t0, Micros t1) const {
    HolderExpect e;
    const Rec& v = visible(s, k);
    const bool valid = v.exists && v.status == St::in_progress && v.attempt == attempt;
    if (snapshot_stale(s, k)) {
      e.lost = e.serial = true;
      e.why = "snapshot older than the key's last commit";
    } else if (valid) {
      e.ok = true;
      e.why = "attempt holds the record";
      if (history_at(v).lo <= t1 + kSlack) {
        e.lost = true;
        e.why += " (but it is history by now)";
      }
    } else {
      e.lost = true;
      e.why = v.exists ? std::string("record is ") + st_name(v.status) + " at attempt " + std::to_string(v.attempt)
                       : std::string("no record");
    }
    (void)t0;
    if (s.tx && s.tx->iso == Isolation::serializable) e.serial = true;
    return e;
  }

  // One checkpoint/complete/release. stale: the caller chose an attempt it knows does not hold the
  // record; the call runs under a savepoint (or in a transaction of its own) and is rolled back.
  void holder_call(Session& s, Call c, int k, std::int64_t attempt, bool stale, const Draw& d) {
    const bool autocommit = !s.tx;
    std::string frame_name;
    std::optional<std::string> row_before;
    if (stale) {
      ++n_stale_;
      if (autocommit) {
        must(*s.conn, "BEGIN", s.name);
        Tx tx;
        tx.serial = ++tx_serial_;
        s.tx = std::move(tx);
      }
      frame_name = "stale_" + std::to_string(++sp_serial_);
      must(*s.conn, "SAVEPOINT " + frame_name, s.name);
      s.tx->frames.push_back(Frame{frame_name, s.tx->writes});
      Reply before = stmt(*s.conn, kRowText, {keys_[k].tenant, keys_[k].digest_hex});
      if (!before.ok()) {
        // SERIALIZABLE may refuse even the read (a dangerous structure found by SSI).
        if (before.state != "40001" || s.tx->iso != Isolation::serializable) {
          violation(
              s.name + ": reading the row before a stale call failed: SQLSTATE " + before.state + ": " + before.error,
              k);
        }
        ++n_serialization_;
        note(txlabel(s) + " read before a stale call -> 40001");
        must(*s.conn, "ROLLBACK TO SAVEPOINT " + frame_name, s.name);
        must(*s.conn, "RELEASE SAVEPOINT " + frame_name, s.name);
        s.tx->writes = s.tx->frames.back().writes;
        s.tx->frames.pop_back();
        if (autocommit) {
          must(*s.conn, "ROLLBACK", s.name);
          s.tx.reset();
        }
        return;
      }
      if (before.rows->size() == 1) row_before = before.rows->text(0, "row");
    } else if (autocommit) {
      Tx tx;
      tx.serial = ++tx_serial_;
      tx.block = false;
      s.tx = std::move(tx);
    }
    const std::string label = txlabel(s);
    const std::string what = label + " " + call_name(c) + " " + klabel(k) + " attempt " + std::to_string(attempt) +
                             (stale ? " (stale token)" : "");
    Params params = {keys_[k].handle, std::to_string(attempt)};
    std::string rp;
    std::optional<std::string> data, err;
    Response resp;
    const std::string* sql = &kCheckpoint;
    switch (c) {
      case Call::checkpoint:
        rp = "step_" + std::to_string(step_);
        if (d[6] % 4 != 0) data = R"({"n": )" + std::to_string(d[7] % 100000) + "}";
        params.push_back(rp);
        params.push_back(data);
        break;
      case Call::complete: {
        sql = &kComplete;
        static const int kStatuses[] = {200, 201, 202, 400, 402, 409, 422};
        resp.status = kStatuses[d[6] % 7];
        Param headers;
        if (d[7] % 5 != 0) {
          headers = R"({"X-Op": ")" + std::to_string(step_) + R"(", "X-Session": ")" + s.name + R"("})";
          resp.headers = *headers;
        } else {
          resp.headers = "{}";
        }
        Param body;
        if (d[8] % 6 != 0) {
          std::string b = "body " + std::to_string(step_) + " ";
          const int n = static_cast<int>(d[9] % 24);
          std::uint64_t x = d[10];
          for (int i = 0; i < n; ++i) {
            b += static_cast<char>(x & 0xFF);
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
          }
          b += '\0';
          resp.body = b;
          body = bytea_param(b);
        }
        if (d[11] % 4 != 0) resp.order_id = "ord-" + std::to_string(step_);
        params.push_back(std::to_string(resp.status));
        params.push_back(headers);
        params.push_back(body);
        params.push_back(resp.order_id);
        break;
      }
      case Call::release:
        sql = &kRelease;
        if (d[6] % 2 == 0) err = "transient failure " + std::to_string(step_);
        params.push_back(err);
        break;
    }
    Reply r = stmt(*s.conn, *sql, params);
    if (r.state == "55P03") violation("invariant 5: " + what + " waited for a lock (55P03 under lock_timeout)", k);
    if (r.state == "57014") violation("invariant 5: " + what + " hit statement_timeout (it hung)", k);
    if (r.seconds > kNoWaitSeconds) violation("invariant 5: " + what + " took " + std::to_string(r.seconds) + " s", k);

    Micros t0 = 0, t1 = 0;
    if (r.ok()) {
      t0 = std::stoll(r.rows->text(0, "t0"));
      t1 = std::stoll(r.rows->text(0, "t1"));
    } else {
      // No times from a failed call: bracket it by the client's duration, ending now.
      t1 = server_now();
      t0 = t1 - static_cast<Micros>(r.seconds * 1e6) - kSlack;
    }
    const HolderExpect e = predict_holder(s, k, attempt, t0, t1);
    const std::string result = r.ok() ? "ok" : "SQLSTATE " + r.state;
    note(what + " -> " + result + (r.ok() ? " [" + rel(t0) + "," + rel(t1) + "]" : ""));

    if (r.state == "IK005") ++n_lease_lost_;
    if (r.state == "40001") ++n_serialization_;
    const bool allowed = (r.ok() && e.ok) || (r.state == "IK005" && e.lost) || (r.state == "40001" && e.serial);
    if (stale && r.ok()) {
      const Result after = must(*s.conn, kRowText, s.name, {keys_[k].tenant, keys_[k].digest_hex});
      violation("invariant 4: " + what +
                    " succeeded (expected ERR_LEASE_LOST); row before: " + (row_before ? *row_before : "none") +
                    "; row after: " + (after.size() ? after.text(0, "row") : "none"),
                k);
    }
    if (!allowed) {
      violation(std::string(stale ? "invariant 4: " : "model: ") + what + " -> " + result +
                    (r.ok() ? "" : " (" + r.error + ")") + "; expected " + (e.ok ? "success " : "") +
                    (e.lost ? "IK005 " : "") + (e.serial ? "40001 " : "") + "(" + e.why + ")",
                k);
    }
    if (stale) {
      // Back to the savepoint: the stale call changed nothing, whatever it answered.
      must(*s.conn, "ROLLBACK TO SAVEPOINT " + frame_name, s.name);
      must(*s.conn, "RELEASE SAVEPOINT " + frame_name, s.name);
      s.tx->writes = s.tx->frames.back().writes;
      s.tx->frames.pop_back();
      if (autocommit) {
        must(*s.conn, "ROLLBACK", s.name);
        s.tx.reset();
      }
      return;
    }
    if (!r.ok()) {
      recover_after_error(s);
      return;
    }
    Rec& w = writable(s, k);
    switch (c) {
      case Call::checkpoint: {
        ++n_checkpoint_;
        const Micros v = std::stoll(r.rows->text(0, "v"));
        if (v - w.lease < t0 - kSlack || v - w.lease > t1 + kSlack) {
          violation(what + ": checkpoint returned " + rel(v) + ", not the call's time + lease " +
                        std::to_string(w.lease / 1000) + "ms (call ran " + rel(t0) + ".." + rel(t1) + ")",
                    k);
        }
        w.lease_end = v;
        w.checkpointed = true;
        w.rp = rp;
        w.rdata = data;
        break;
      }
      case Call::complete:
        ++n_complete_;
        w.status = St::resolved;
        w.resp = resp;
        w.end_lo = t0;
        w.end_hi = t1;
        break;
      case Call::release:
        ++n_release_;
        w.status = St::released;
        w.end_lo = t0;
        w.end_hi = t1;
        break;
    }
    if (autocommit) {
      std::vector<int> ks;
      for (const auto& [key, rec] : s.tx->writes) ks.push_back(key);
      commit_writes(s.tx->writes);
      s.tx.reset();
      cross_check(ks);
    }
  }

  // Keys whose record the session sees in_progress and nobody else holds.
  std::vector<int> holder_candidates(const Session& s, bool own_only) const {
    std::vector<int> out;
    for (int k = 0; k < kKeys; ++k) {
      if (own_only && !owns(s, k)) continue;
      const Rec& v = visible(s, k);
      if (v.exists && v.status == St::in_progress && locker(&s, k).empty()) out.push_back(k);
    }
    return out;
  }

  bool try_holder(Session& s, Call c, const Draw& d) {
    std::vector<int> ks = holder_candidates(s, d[4] % 10 < 6);
    if (ks.empty()) ks = holder_candidates(s, false);
    if (ks.empty()) return false;
    const int k = ks[d[5] % ks.size()];
    holder_call(s, c, k, visible(s, k).attempt, false, d);
    return true;
  }

  void stale_call(Session& s, const Draw& d) {
    std::vector<int> free;
    for (int k = 0; k < kKeys; ++k) {
      if (locker(&s, k).empty()) free.push_back(k);
    }
    if (free.empty()) return;
    const int k = free[d[4] % free.size()];
    const Rec& v = visible(s, k);
    std::vector<std::int64_t> old;
    for (std::int64_t a : attempts_[k]) {
      const bool holds = v.exists && v.status == St::in_progress && v.attempt == a;
      const bool holds_latest =
          committed_[k].exists && committed_[k].status == St::in_progress && committed_[k].attempt == a;
      if (!holds && !holds_latest) old.push_back(a);
    }
    std::int64_t attempt;
    if (!old.empty() && d[5] % 3 != 0) {
      attempt = old[d[6] % old.size()];
    } else {
      attempt = std::max(v.attempt, max_attempt_) + kStaleOffset;
    }
    holder_call(s, static_cast<Call>(d[3] % 3), k, attempt, true, d);
  }

  // ------------------------------------------------------------------------------ purge

  void purge_step(const Draw& d) {
    if (purge_open_) {
      const int choice = static_cast<int>(d[2] % 10);
      if (step_ - purge_since_ > kMaxPurgeTxSteps || (choice >= 4 && choice <= 6)) {
        purge_finish(true);
      } else if (choice == 7) {
        purge_finish(false);
      } else if (choice <= 3) {
        purge_call(d[3] % 3 == 0 ? 1 : 1000);
      }  // else: keep holding it open
      return;
    }
    if (d[2] % 10 < 3) {
      must(*purge_conn_, "BEGIN", "purge");
      purge_open_ = true;
      purge_since_ = step_;
      note("purge BEGIN");
    }
    purge_call(d[3] % 4 == 0 ? 1 : 1000);
  }

  void purge_call(int batch) {
    Reply r = stmt(*purge_conn_, kPurge, {std::to_string(batch)});
    const std::string what =
        std::string("purge_expired(") + std::to_string(batch) + ")" + (purge_open_ ? " in an open transaction" : "");
    if (r.state == "55P03" || r.seconds > kNoWaitSeconds) {
      violation("invariant 5: " + what + " waited (" + std::to_string(r.seconds) + " s, SQLSTATE " + r.state + ")");
    }
    if (!r.ok()) violation(what + " failed: SQLSTATE " + r.state + ": " + r.error);
    const Micros t0 = std::stoll(r.rows->text(0, "t0"));
    const Micros t1 = std::stoll(r.rows->text(0, "t1"));
    const int n = r.rows->integer(0, "n");
    // Which records vanished: from its own transaction's view, or (autocommit) from another connection.
    const auto rows = read_rows(purge_open_ ? *purge_conn_ : *observer_);
    std::vector<int> deleted;
    for (int k = 0; k < kKeys; ++k) {
      if (committed_[k].exists && !purge_deleted_.count(k) && !rows.count(keys_[k].handle)) deleted.push_back(k);
    }
    std::string list;
    for (int k : deleted) list += " k" + std::to_string(k);
    note(what + " -> " + std::to_string(n) + " [" + rel(t0) + "," + rel(t1) +
         "] deleted:" + (list.empty() ? " none" : list));
    if (static_cast<std::size_t>(n) != deleted.size()) {
      violation(what + " returned " + std::to_string(n) + " but " + std::to_string(deleted.size()) +
                " records vanished:" + list);
    }
    for (int k : deleted) {
      const Window h = history_at(committed_[k]);
      if (h.lo > t1 + kSlack) violation(what + " deleted " + klabel(k) + ", which is not history", k);
      const std::string held = locker(nullptr, k, false);
      if (!held.empty()) violation(what + " deleted " + klabel(k) + " which " + held + " holds (a key in use)", k);
    }
    // Fewer than the batch: every record that is history and not in use should be gone (the
    // records skipped because they are in use do not count against the batch).
    if (n < batch) {
      for (int k = 0; k < kKeys; ++k) {
        if (!committed_[k].exists || purge_deleted_.count(k)) continue;
        if (std::find(deleted.begin(), deleted.end(), k) != deleted.end()) continue;
        const Window h = history_at(committed_[k]);
        if (h.hi < t0 - kSlack && locker(nullptr, k, false).empty()) {
          std::string in_use;
          for (int o = 0; o < kKeys; ++o) {
            const std::string held = locker(nullptr, o, false);
            if (committed_[o].exists && !held.empty() && history_at(committed_[o]).lo <= t1 + kSlack) {
              in_use += " k" + std::to_string(o) + " (history since " + rel(history_at(committed_[o]).lo) +
                        ", held by " + held + ")";
            }
          }
          violation(what + " kept " + klabel(k) + ", history since " + rel(h.hi) + " and not in use; history records" +
                        " in use:" + (in_use.empty() ? " none" : in_use) +
                        " (records skipped because they are in use must not use up the batch)",
                    k);
        }
      }
    }
    if (purge_open_) {
      purge_deleted_.insert(deleted.begin(), deleted.end());
    } else {
      apply_purge(deleted);
    }
  }

  void apply_purge(const std::vector<int>& deleted) {
    for (int k : deleted) {
      Rec& c = committed_[k];
      c.hwm = std::max(c.hwm, c.gen);
      const int hwm = c.hwm;
      const std::uint64_t ver = c.ver;
      c = Rec{};
      c.hwm = hwm;
      c.ver = ver + 1;
      ++n_purged_;
    }
    cross_check(deleted);
  }

  void purge_finish(bool commit_it) {
    must(*purge_conn_, commit_it ? "COMMIT" : "ROLLBACK", "purge");
    purge_open_ = false;
    std::vector<int> deleted(purge_deleted_.begin(), purge_deleted_.end());
    purge_deleted_.clear();
    note(std::string("purge ") + (commit_it ? "COMMIT" : "ROLLBACK") + " (" + std::to_string(deleted.size()) +
         " deleted)");
    if (commit_it) apply_purge(deleted);
  }

  // ------------------------------------------------------------------------------ the driver

  enum class Act {
    begin,
    acquire,
    checkpoint,
    complete,
    release,
    savepoint,
    rollback_to,
    release_sp,
    commit,
    rollback,
    prepare,
    finish_prepared,
    stale,
    sleep
  };

  static Act weighted(std::uint64_t r, const std::vector<std::pair<Act, int>>& options) {
    int total = 0;
    for (const auto& [a, w] : options) total += w;
    int x = static_cast<int>(r % static_cast<std::uint64_t>(total));
    for (const auto& [a, w] : options) {
      if (x < w) return a;
      x -= w;
    }
    return options.front().first;
  }

  void session_step(Session& s, const Draw& d) {
    const int k = static_cast<int>(d[4] % kKeys);
    const int vroll = static_cast<int>(d[5] % 100);
    const int variant = vroll < 65 ? 0 : vroll < 88 ? 1 : 2;
    const Micros lease = kLeases[d[6] % 4];
    const Micros ttl = kTtls[d[7] % 3];
    const bool wait = d[8] % 100 < 6;
    if (s.tx) {
      ++s.tx->steps;
      const bool sp = !s.tx->frames.empty();
      if (s.tx->steps > kMaxTxSteps) {
        if (d[2] % 5 == 0)
          rollback(s);
        else
          commit(s);
        return;
      }
      const Act a = weighted(d[2], {{Act::acquire, 30},
                                    {Act::checkpoint, 9},
                                    {Act::complete, 14},
                                    {Act::release, 6},
                                    {Act::savepoint, s.tx->frames.size() < 2 ? 6 : 0},
                                    {Act::rollback_to, sp ? 6 : 0},
                                    {Act::release_sp, sp ? 2 : 0},
                                    {Act::commit, 14},
                                    {Act::rollback, 4},
                                    {Act::prepare, prepared_.size() < kMaxPrepared ? 3 : 0},
                                    {Act::stale, 5},
                                    {Act::sleep, 2}});
      switch (a) {
        case Act::acquire:
          acquire(s, k, variant, lease, ttl, wait);
          break;
        case Act::checkpoint:
          if (!try_holder(s, Call::checkpoint, d)) acquire(s, k, variant, lease, ttl, wait);
          break;
        case Act::complete:
          if (!try_holder(s, Call::complete, d)) acquire(s, k, variant, lease, ttl, wait);
          break;
        case Act::release:
          if (!try_holder(s, Call::release, d)) acquire(s, k, variant, lease, ttl, wait);
          break;
        case Act::savepoint:
          savepoint(s);
          break;
        case Act::rollback_to:
          rollback_to(s, d[3] % s.tx->frames.size());
          break;
        case Act::release_sp:
          release_savepoint(s, d[3] % s.tx->frames.size());
          break;
        case Act::commit:
          commit(s);
          break;
        case Act::rollback:
          rollback(s);
          break;
        case Act::prepare:
          prepare(s);
          break;
        case Act::stale:
          stale_call(s, d);
          break;
        case Act::sleep:
          sleep(d);
          break;
        default:
          break;
      }
      return;
    }
    const Act a = weighted(d[2], {{Act::begin, 40},
                                  {Act::acquire, 15},
                                  {Act::checkpoint, 4},
                                  {Act::complete, 6},
                                  {Act::release, 3},
                                  {Act::finish_prepared, prepared_.empty() ? 0 : 8},
                                  {Act::stale, 4},
                                  {Act::sleep, 3}});
    switch (a) {
      case Act::begin: {
        static const Isolation kLevels[] = {Isolation::read_committed, Isolation::repeatable_read,
                                            Isolation::serializable};
        begin(s, kLevels[d[3] % 3]);
        break;
      }
      case Act::acquire:
        acquire(s, k, variant, lease, ttl, wait);
        break;
      case Act::checkpoint:
        if (!try_holder(s, Call::checkpoint, d)) acquire(s, k, variant, lease, ttl, wait);
        break;
      case Act::complete:
        if (!try_holder(s, Call::complete, d)) acquire(s, k, variant, lease, ttl, wait);
        break;
      case Act::release:
        if (!try_holder(s, Call::release, d)) acquire(s, k, variant, lease, ttl, wait);
        break;
      case Act::finish_prepared:
        finish_prepared(s, d[3] % prepared_.size(), d[9] % 4 != 0);
        break;
      case Act::stale:
        stale_call(s, d);
        break;
      case Act::sleep:
        sleep(d);
        break;
      default:
        break;
    }
  }

  void sleep(const Draw& d) {
    const int ms = d[9] % 5 == 0 ? 100 + static_cast<int>(d[10] % 250) : 1 + static_cast<int>(d[10] % 20);
    note("sleep " + std::to_string(ms) + "ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

  // ------------------------------------------------------------------------------ the end

  void finish() {
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

  std::string url_;
  std::uint64_t seed_;
  double seconds_;
  long max_ops_;
  std::mt19937_64 rng_;
  std::string extversion_;
  std::unique_ptr<Connection> observer_;
  std::unique_ptr<Connection> purge_conn_;
  std::string purge_pid_;
  bool purge_open_ = false;
  long purge_since_ = 0;
  std::set<int> purge_deleted_;
  std::vector<Session> sessions_;
  std::vector<KeyInfo> keys_;
  std::vector<Rec> committed_;
  std::map<int, std::map<int, Response>> responses_;   // committed completes by key and generation
  std::map<int, std::vector<std::int64_t>> attempts_;  // recent attempts issued per key
  std::vector<Prepared> prepared_;
  std::deque<std::string> trace_;
  Micros base_ = 0;
  std::int64_t max_attempt_ = 0;
  long step_ = 0;
  long statements_ = 0;
  int tx_serial_ = 0;
  int sp_serial_ = 0;
  int gid_serial_ = 0;
  Clock::time_point started_ = Clock::now();
  long n_acquired_ = 0, n_resumed_ = 0, n_replay_ = 0, n_in_progress_ = 0, n_mismatch_ = 0;
  long n_lease_lost_ = 0, n_stale_ = 0, n_purged_ = 0, n_prepared_ = 0, n_commit_prepared_ = 0;
  long n_rollback_prepared_ = 0, n_serialization_ = 0, n_serialization_fresh_ = 0, n_checkpoint_ = 0;
  long n_complete_ = 0, n_release_ = 0, n_commit_ = 0, n_rollback_ = 0, n_sp_rollback_ = 0, n_wait_ = 0;
  long n_lock_probes_ = 0, n_serialization_fresh_rr_ = 0;
};

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
