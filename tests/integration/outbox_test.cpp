// The outbox under crashes: 8 writers emit 20,000 events in their business transactions (10% roll
// back, 10% roll back a savepoint), 4 workers of one consumer apply them through consume_once while
// a killer terminates their backends at chosen points and some stall past their claim's visibility.
// Every committed event must be applied once, in commit order per key.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/pq.hpp"

namespace idem::it {
namespace {

constexpr int kWriters = 8;
constexpr int kWorkers = 4;
constexpr int kTenants = 8;
constexpr int kKeysPerTenant = 32;
constexpr int kEventsPerWriter = 2500;  // 20,000 emitted in all, committed or rolled back
constexpr int kMinEventsPerTx = 5;
constexpr int kMaxEventsPerTx = 10;
constexpr double kRollbackProbability = 0.10;
constexpr double kTwoTenantProbability = 0.25;  // a transaction emitting to two groups
// A committing transaction that rolls back a savepoint holding its last few events (with their
// business rows and counter bumps), sometimes all of one of its groups.
constexpr double kSavepointRollbackProbability = 0.10;
constexpr int kMaxCommitDelayMs = 200;
constexpr int kBatch = 50;
const char* const kVisibility = "2 seconds";
// A claim that expires counts as a failure of its oldest event; with kills every half second a
// low limit would dead-letter events, which this test is not about.
constexpr int kMaxAttempts = 1000;
// Now and then a worker stalls past its claim's visibility at one of the kill points, alive: a
// takeover must fence it (consume_once or ack refuses its token) or wait for its open effect.
constexpr double kStallProbability = 0.02;  // per non-empty batch
constexpr int kStallMs = 2500;
constexpr int kMinKillGapMs = 300;
constexpr int kMaxKillGapMs = 700;
constexpr auto kDrainTimeout = std::chrono::seconds(60);
constexpr std::uint64_t kSeed = 0x0b7b0c5;
const char* const kConsumer = "sync";
const char* const kTopic = "orders";

using Clock = std::chrono::steady_clock;

std::string tenant_name(int t) { return "t" + std::to_string(t); }
std::string key_name(int k) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%02d", k);
  return buf;
}
std::string worker_app_name(int w) { return "idem-outbox-test-worker-" + std::to_string(w); }
// Odd workers commit the effect, then ack in later transactions (the "applied, died before the
// ack" path), in 1-3 chunks in random order (acks past the acked prefix); even ones ack all in
// the effect's transaction.
bool acks_separately(int w) { return w % 2 == 1; }

std::string bigint_array(const std::vector<long long>& ids) {
  std::string out = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "}";
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ------------------------------------------------------------------------------------- writers

struct Emitted {
  long long event_id;
  std::string tenant, key, order_id;
  int seq;
};

struct WriterLog {
  long commits = 0, rollbacks = 0, server_rollbacks = 0, savepoint_rollbacks = 0;
  std::vector<Emitted> committed;
  std::vector<long long> rolled_back;  // event ids of (sub)transactions that did not commit
  std::vector<std::string> failures;
};

class Writer {
 public:
  Writer(int id, std::string url, WriterLog& log) : id_(id), url_(std::move(url)), log_(log), rng_(kSeed * 31 + id) {}

  void run() {
    try {
      Connection db(url_);
      db.exec("SET statement_timeout = '30s'");
      // The per-key counter row stays locked until the commit: commit order per key is seq order.
      db.prepare("bump", "UPDATE key_counters SET seq = seq + 1 WHERE tenant = $1 AND key = $2 RETURNING seq");
      db.prepare("emit",
                 "SELECT idem.emit($1, 'orders', jsonb_build_object('tenant', $1::text, 'key', $2::text,"
                 " 'seq', $3::int, 'order_id', $4::text), $2) AS event_id");
      db.prepare("order",
                 "INSERT INTO orders (tenant, order_id, key, seq, event_id) VALUES ($1, $2, $3, $4::int, $5::bigint)");
      int left = kEventsPerWriter;
      for (int tx = 0; left > 0; ++tx) {
        const int n = std::min(left, pick(kMinEventsPerTx, kMaxEventsPerTx));
        transaction(db, tx, n);
        left -= n;
      }
    } catch (const std::exception& e) {
      log_.failures.push_back("writer " + std::to_string(id_) + ": " + e.what());
    }
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  // n events over 2-4 keys of one tenant, or of two; rows locked in (tenant, key) order so two
  // writers never wait on each other in a circle.
  std::vector<std::pair<int, int>> plan(int n) {
    std::vector<int> tenants{pick(0, kTenants - 1)};
    if (std::uniform_real_distribution<double>(0, 1)(rng_) < kTwoTenantProbability) {
      tenants.push_back((tenants[0] + pick(1, kTenants - 1)) % kTenants);
    }
    std::vector<std::pair<int, int>> keys;
    const int distinct = pick(2, 4);
    for (int i = 0; i < distinct; ++i) {
      keys.emplace_back(tenants[i % tenants.size()], pick(0, kKeysPerTenant - 1));
    }
    std::vector<std::pair<int, int>> events;
    for (int i = 0; i < n; ++i) events.push_back(keys[i < distinct ? i : pick(0, distinct - 1)]);
    std::sort(events.begin(), events.end());
    return events;
  }

  void transaction(Connection& db, int tx_no, int n) {
    const bool roll_back = std::uniform_real_distribution<double>(0, 1)(rng_) < kRollbackProbability;
    const bool partial =
        !roll_back && n >= 2 && std::uniform_real_distribution<double>(0, 1)(rng_) < kSavepointRollbackProbability;
    const auto events = plan(n);
    const std::size_t cut = partial ? static_cast<std::size_t>(pick(1, n - 1)) : events.size();
    std::vector<Emitted> emitted;
    try {
      auto tx = db.begin();
      for (std::size_t i = 0; i < events.size(); ++i) {
        if (i == cut) tx->exec("SAVEPOINT tail");
        Emitted e;
        e.tenant = tenant_name(events[i].first);
        e.key = key_name(events[i].second);
        e.order_id = "o-w" + std::to_string(id_) + "-" + std::to_string(tx_no) + "-" + std::to_string(i);
        e.seq = tx->exec_prepared("bump", {e.tenant, e.key}).integer(0, "seq");
        e.event_id = std::stoll(
            tx->exec_prepared("emit", {e.tenant, e.key, std::to_string(e.seq), e.order_id}).text(0, "event_id"));
        tx->exec_prepared("order", {e.tenant, e.order_id, e.key, std::to_string(e.seq), std::to_string(e.event_id)});
        emitted.push_back(std::move(e));
      }
      if (partial) {
        tx->exec("ROLLBACK TO SAVEPOINT tail");
        ++log_.savepoint_rollbacks;
        for (std::size_t i = cut; i < emitted.size(); ++i) log_.rolled_back.push_back(emitted[i].event_id);
        emitted.resize(cut);
      }
      sleep_ms(pick(0, kMaxCommitDelayMs));  // between the last emit and COMMIT
      if (roll_back) {
        tx->abort();
        ++log_.rollbacks;
        for (const auto& e : emitted) log_.rolled_back.push_back(e.event_id);
        return;
      }
      tx->commit();
      ++log_.commits;
      log_.committed.insert(log_.committed.end(), emitted.begin(), emitted.end());
    } catch (const DbError& e) {
      if (e.in_doubt()) throw;  // nobody kills writers: the outcome must be known
      if (!is_retryable(e)) throw;
      ++log_.server_rollbacks;  // the server rolled it back: its events must never be applied
      for (const auto& ev : emitted) log_.rolled_back.push_back(ev.event_id);
    }
  }

  int id_;
  std::string url_;
  WriterLog& log_;
  std::mt19937_64 rng_;
};

// ------------------------------------------------------------------ kill points and the killer

enum KillPoint { kNone, kAnytime, kAfterClaim, kMidEffect, kBeforeCommit, kAfterEffectCommit, kBetweenAcks, kPoints };
const char* const kPointNames[kPoints] = {"none",          "anytime",             "after_claim", "mid_effect",
                                          "before_commit", "after_effect_commit", "between_acks"};

// What the killer and one worker share: the backend's pid and a handshake that holds the worker
// at an armed point until its backend has been terminated.
struct WorkerControl {
  std::atomic<int> pid{0};
  std::mutex mu;
  std::condition_variable cv;
  KillPoint armed = kNone;
  bool reached = false;
  bool released = false;

  // Called by the worker at point p: waits there while the killer terminates its backend.
  void at(KillPoint p) {
    std::unique_lock<std::mutex> lock(mu);
    if (armed != p) return;
    reached = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return released; });
    armed = kNone;
    reached = released = false;
  }
};

struct KillerLog {
  long kills[kPoints] = {};
  long missed = 0;  // armed, but the worker did not get there in time
  std::vector<std::string> failures;
};

class Killer {
 public:
  Killer(std::string url, std::vector<std::unique_ptr<WorkerControl>>& controls, std::atomic<bool>& stop,
         KillerLog& log)
      : url_(std::move(url)), controls_(controls), stop_(stop), log_(log), rng_(kSeed * 7 + 1) {}

  void run() {
    try {
      Connection db(url_);
      while (!stop_) {
        sleep_ms(pick(kMinKillGapMs, kMaxKillGapMs));
        if (stop_) break;
        const int roll = pick(0, 99);
        const KillPoint p = roll < 25   ? kAnytime
                            : roll < 45 ? kAfterClaim
                            : roll < 60 ? kMidEffect
                            : roll < 75 ? kBeforeCommit
                            : roll < 90 ? kAfterEffectCommit
                                        : kBetweenAcks;
        int w = pick(0, kWorkers - 1);
        if ((p == kAfterEffectCommit || p == kBetweenAcks) && !acks_separately(w)) w = (w + 1) % kWorkers;
        if (p == kAnytime) {
          if (terminate(db, w)) ++log_.kills[p];
        } else {
          kill_at(db, w, p);
        }
      }
    } catch (const std::exception& e) {
      log_.failures.push_back(std::string("killer: ") + e.what());
    }
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void kill_at(Connection& db, int w, KillPoint p) {
    WorkerControl& c = *controls_[w];
    {
      std::unique_lock<std::mutex> lock(c.mu);
      c.armed = p;
      c.reached = c.released = false;
      if (!c.cv.wait_for(lock, std::chrono::milliseconds(1500), [&] { return c.reached; })) {
        c.armed = kNone;
        ++log_.missed;
        return;
      }
    }
    const bool killed = terminate(db, w);
    {
      std::lock_guard<std::mutex> lock(c.mu);
      c.released = true;
    }
    c.cv.notify_all();
    if (killed) ++log_.kills[p];
  }

  // Only that worker's backend in this database (a pid can be reused by anyone's backend); waits
  // until it has exited.
  bool terminate(Connection& db, int w) {
    const int pid = controls_[w]->pid.load();
    if (pid == 0) return false;
    const Result r = db.exec(
        "SELECT pg_terminate_backend(pid, 5000) AS killed FROM pg_stat_activity"
        " WHERE pid = $1::int AND datname = current_database() AND application_name = $2",
        {std::to_string(pid), worker_app_name(w)});
    return r.size() == 1 && r.text(0, "killed") == "t";
  }

  std::string url_;
  std::vector<std::unique_ptr<WorkerControl>>& controls_;
  std::atomic<bool>& stop_;
  KillerLog& log_;
  std::mt19937_64 rng_;
};

// ------------------------------------------------------------------------- consumer workers

struct Delivery {
  std::string event_id, tenant, key, seq, order_id;
  bool redelivered;
};

struct WorkerLog {
  long claims = 0, empty_claims = 0, delivered = 0, redelivered = 0;
  long applied = 0;         // consume_once true, in transactions whose commit succeeded
  long skipped = 0;         // consume_once false (a redelivery stopped), committed likewise
  long fenced = 0;          // ERR_OUTBOX_CLAIM_TOKEN_MISMATCH: the claim was taken over
  long not_claimed = 0;     // ERR_OUTBOX_NOT_CLAIMED: likewise, seen by ack
  long connection_lost = 0;
  long stalls[kPoints] = {};
  std::map<std::string, long> lost_by_state;
  std::vector<std::string> failures;
};

class ConsumerWorker {
 public:
  ConsumerWorker(int id, std::string url, WorkerControl& control, std::atomic<bool>& stop, WorkerLog& log)
      : id_(id), url_(std::move(url)), control_(control), stop_(stop), log_(log), rng_(kSeed * 13 + id) {}

  void run() {
    while (!stop_) {
      if (!db_ && !connect()) {
        sleep_ms(100);
        continue;
      }
      try {
        const std::vector<Delivery> batch = claim();
        if (batch.empty()) {
          sleep_ms(std::uniform_int_distribution<int>(5, 25)(rng_));
          continue;
        }
        stall_ = choose_stall();
        point(kAfterClaim);
        apply(batch);
      } catch (const DbError& e) {
        on_error(e);
      } catch (const std::exception& e) {
        fail(e.what());
        drop_connection();
      }
    }
    drop_connection();
  }

 private:
  bool connect() {
    try {
      auto db = std::make_unique<Connection>(url_);
      db->exec("SET application_name = '" + worker_app_name(id_) + "'");
      db->exec("SET statement_timeout = '30s'");
      db->prepare("claim",
                  "SELECT event_id, tenant_id, key, payload->>'seq' AS seq, payload->>'order_id' AS order_id,"
                  " redelivered, token FROM idem.claim($1, ARRAY['orders'], $2::int, $3::interval)");
      db->prepare("consume", "SELECT idem.consume_once($1, $2::bigint, $3::uuid) AS first");
      db->prepare("effect",
                  "INSERT INTO effects (event_id, tenant, key, seq, order_id, worker, token)"
                  " VALUES ($1::bigint, $2, $3, $4::int, $5, $6::int, $7::uuid)");
      db->prepare("ack", "SELECT idem.ack($1, $2::bigint[], $3::uuid) AS n");
      control_.pid = std::stoi(db->exec("SELECT pg_backend_pid() AS pid").text(0, "pid"));
      db_ = std::move(db);
      return true;
    } catch (const std::exception&) {
      ++log_.connection_lost;  // killed while connecting
      return false;
    }
  }

  KillPoint choose_stall() {
    if (std::uniform_real_distribution<double>(0, 1)(rng_) >= kStallProbability) return kNone;
    static const KillPoint kStallPoints[] = {kAfterClaim, kMidEffect, kBeforeCommit, kAfterEffectCommit, kBetweenAcks};
    const KillPoint p = kStallPoints[std::uniform_int_distribution<int>(0, 4)(rng_)];
    return (p == kAfterEffectCommit || p == kBetweenAcks) && !acks_separately(id_) ? kBeforeCommit : p;
  }

  // A kill point: the killer may terminate the backend here, or the worker stalls here.
  void point(KillPoint p) {
    control_.at(p);
    if (stall_ == p) {
      ++log_.stalls[p];
      sleep_ms(kStallMs);
    }
  }

  void drop_connection() {
    control_.pid = 0;
    db_.reset();
  }

  std::vector<Delivery> claim() {
    auto tx = db_->begin();
    const Result r = tx->exec_prepared("claim", {kConsumer, std::to_string(kBatch), kVisibility});
    tx->commit();
    ++log_.claims;
    std::vector<Delivery> batch;
    for (std::size_t i = 0; i < r.size(); ++i) {
      batch.push_back(Delivery{r.text(i, "event_id"), r.text(i, "tenant_id"), r.text(i, "key"), r.text(i, "seq"),
                               r.text(i, "order_id"), r.text(i, "redelivered") == "t"});
      if (i == 0) token_ = r.text(i, "token");
      if (r.text(i, "token") != token_) fail("one claim returned two tokens");
    }
    if (batch.empty()) ++log_.empty_claims;
    log_.delivered += static_cast<long>(batch.size());
    for (const auto& d : batch) log_.redelivered += d.redelivered;
    return batch;
  }

  // The effect and consume_once in one transaction; the ack in it too, or in a second one.
  void apply(const std::vector<Delivery>& batch) {
    long applied = 0, skipped = 0;
    std::vector<long long> ids;
    auto tx = db_->begin();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const Delivery& d = batch[i];
      ids.push_back(std::stoll(d.event_id));
      if (tx->exec_prepared("consume", {kConsumer, d.event_id, token_}).text(0, "first") == "t") {
        tx->exec_prepared("effect", {d.event_id, d.tenant, d.key, d.seq, d.order_id, std::to_string(id_), token_});
        ++applied;
      } else {
        ++skipped;
      }
      if (i == batch.size() / 2) point(kMidEffect);
    }
    if (!acks_separately(id_)) ack(*tx, ids);
    point(kBeforeCommit);
    tx->commit();
    log_.applied += applied;
    log_.skipped += skipped;
    if (acks_separately(id_)) {
      point(kAfterEffectCommit);
      const auto chunks = ack_chunks(ids);
      for (std::size_t c = 0; c < chunks.size(); ++c) {
        if (c > 0) point(kBetweenAcks);
        auto tx2 = db_->begin();
        ack(*tx2, chunks[c]);
        tx2->commit();
      }
    }
  }

  std::vector<std::vector<long long>> ack_chunks(const std::vector<long long>& ids) {
    const int n = std::min<int>(static_cast<int>(ids.size()), std::uniform_int_distribution<int>(1, 3)(rng_));
    std::vector<std::vector<long long>> chunks(n);
    for (std::size_t i = 0; i < ids.size(); ++i) chunks[i * n / ids.size()].push_back(ids[i]);
    std::shuffle(chunks.begin(), chunks.end(), rng_);
    return chunks;
  }

  void ack(Transaction& tx, const std::vector<long long>& ids) {
    const int n = tx.exec_prepared("ack", {kConsumer, bigint_array(ids), token_}).integer(0, "n");
    if (n != static_cast<int>(ids.size())) {
      fail("ack of " + std::to_string(ids.size()) + " claimed events acknowledged " + std::to_string(n));
    }
  }

  void on_error(const DbError& e) {
    const std::string& state = e.sqlstate();
    if (state == "IK023") {
      ++log_.fenced;  // taken over after the visibility ran out: claim again
    } else if (state == "IK022") {
      ++log_.not_claimed;
    } else if (e.in_doubt() || state.empty() || state.rfind("08", 0) == 0 || state == "57P01") {
      ++log_.connection_lost;  // the killer's work (also during COMMIT: outcome unknown here)
      ++log_.lost_by_state[e.in_doubt() ? "in_doubt" : state.empty() ? "none" : state];
      drop_connection();
    } else {
      fail("SQLSTATE " + state + ": " + e.what());
      drop_connection();
    }
  }

  void fail(const std::string& what) { log_.failures.push_back("worker " + std::to_string(id_) + ": " + what); }

  int id_;
  std::string url_;
  WorkerControl& control_;
  std::atomic<bool>& stop_;
  WorkerLog& log_;
  std::mt19937_64 rng_;
  std::unique_ptr<Connection> db_;
  std::string token_;
  KillPoint stall_ = kNone;
};

// ------------------------------------------------------------------------------------ checks

struct Lag {
  long long backlog = -1, dead_letters = -1, claimed_groups = -1, retrying_groups = -1;
};

Lag read_lag(Connection& db) {
  const Result r = db.exec(
      "SELECT backlog, dead_letters, claimed_groups, retrying_groups FROM idem.outbox_lag"
      " WHERE consumer = $1 AND topic = $2",
      {kConsumer, kTopic});
  Lag lag;
  if (r.size() != 1) return lag;
  lag.backlog = std::stoll(r.text(0, "backlog"));
  lag.dead_letters = std::stoll(r.text(0, "dead_letters"));
  lag.claimed_groups = std::stoll(r.text(0, "claimed_groups"));
  lag.retrying_groups = std::stoll(r.text(0, "retrying_groups"));
  return lag;
}

long long count_of(Connection& db, const std::string& sql, const Params& params = {}) {
  return std::stoll(db.exec(sql, params).text(0, "n"));
}

// Per key, the sequence numbers in the order they were applied (effects.apply_id) must be exactly
// 1..n, n being the key's committed count.
void check_per_key_order(Connection& db) {
  const Result counters = db.exec("SELECT tenant, key, seq FROM key_counters");
  std::map<std::pair<std::string, std::string>, int> committed;
  for (std::size_t i = 0; i < counters.size(); ++i) {
    committed[{counters.text(i, "tenant"), counters.text(i, "key")}] = counters.integer(i, "seq");
  }
  const Result applied =
      db.exec("SELECT tenant, key, seq, apply_id, event_id, worker FROM effects ORDER BY tenant, key, apply_id");
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> rows_of;
  for (std::size_t i = 0; i < applied.size(); ++i) {
    rows_of[{applied.text(i, "tenant"), applied.text(i, "key")}].push_back(i);
  }
  int reported = 0;
  for (const auto& [k, n] : committed) {
    const auto& rows = rows_of[k];
    std::size_t bad = 0;  // the first application out of place
    while (bad < rows.size() && applied.integer(rows[bad], "seq") == static_cast<int>(bad) + 1) ++bad;
    if (bad == rows.size() && static_cast<int>(rows.size()) == n) continue;
    if (reported++ >= 5) continue;
    std::string trail;
    for (std::size_t j = bad < 3 ? 0 : bad - 3; j < rows.size() && j < bad + 4; ++j) {
      const std::size_t i = rows[j];
      trail += " " + applied.text(i, "seq") + " (event " + applied.text(i, "event_id") + ", apply_id " +
               applied.text(i, "apply_id") + ", worker " + applied.text(i, "worker") + ");";
    }
    ADD_FAILURE() << "key " << k.first << "/" << k.second << ": committed seq 1.." << n << ", applied "
                  << rows.size() << " times; application #" << bad + 1 << " is out of place:" << trail;
  }
  EXPECT_EQ(reported, 0) << "keys whose applied sequence is not exactly their committed sequence";
}

void check_outcome(Connection& db, const std::vector<Emitted>& committed, const std::vector<long long>& rolled_back) {
  const long long n = static_cast<long long>(committed.size());
  EXPECT_EQ(count_of(db, "SELECT count(*) AS n FROM orders"), n) << "business rows committed";
  EXPECT_EQ(count_of(db, "SELECT count(*) AS n FROM idem.outbox_events"), n) << "events = committed business rows";
  EXPECT_EQ(count_of(db, "SELECT count(*) AS n FROM effects"), n) << "applications = committed events";

  const Result twice = db.exec(
      "SELECT event_id, count(*) AS n, string_agg(worker::text || '@' || apply_id, ' ' ORDER BY apply_id) AS who"
      " FROM effects GROUP BY event_id HAVING count(*) > 1 ORDER BY event_id LIMIT 10");
  for (std::size_t i = 0; i < twice.size(); ++i) {
    ADD_FAILURE() << "event " << twice.text(i, "event_id") << " applied " << twice.text(i, "n")
                  << " times (worker@apply_id: " << twice.text(i, "who") << ")";
  }
  const Result lost = db.exec(
      "SELECT o.event_id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM effects f WHERE f.event_id = o.event_id)"
      " ORDER BY 1 LIMIT 10");
  for (std::size_t i = 0; i < lost.size(); ++i) {
    ADD_FAILURE() << "committed event " << lost.text(i, "event_id") << " never applied";
  }

  const Param rolled = bigint_array(rolled_back);
  EXPECT_EQ(count_of(db, "SELECT count(*) AS n FROM effects WHERE event_id = ANY ($1::bigint[])", {rolled}), 0)
      << "effects of rolled-back events";
  EXPECT_EQ(
      count_of(db, "SELECT count(*) AS n FROM idem.outbox_events WHERE event_id = ANY ($1::bigint[])", {rolled}), 0)
      << "rolled-back events in the outbox";
  EXPECT_EQ(count_of(db,
                     "SELECT count(*) AS n FROM effects f JOIN orders o USING (event_id)"
                     " WHERE (f.tenant, f.key, f.seq, f.order_id)"
                     "  IS DISTINCT FROM (o.tenant, o.key, o.seq, o.order_id)"),
            0)
      << "effects whose payload is not their business row";
  EXPECT_EQ(count_of(db, "SELECT count(*) AS n FROM idem.outbox_consumed WHERE consumer = $1", {kConsumer}), n);

  // What the writers saw committed is what the database holds.
  std::set<long long> mine;
  for (const auto& e : committed) mine.insert(e.event_id);
  const Result ids = db.exec("SELECT event_id FROM orders");
  std::set<long long> theirs;
  for (std::size_t i = 0; i < ids.size(); ++i) theirs.insert(std::stoll(ids.text(i, "event_id")));
  EXPECT_TRUE(mine == theirs) << "the writers' committed events differ from the orders table";

  check_per_key_order(db);
}

void set_up_schema(Connection& db) {
  db.exec("SELECT idem.create_topic('orders')");
  db.exec("SELECT idem.create_consumer($1, ARRAY['orders'], $2::int)", {kConsumer, std::to_string(kMaxAttempts)});
  db.exec(
      "CREATE TABLE orders (tenant text NOT NULL, order_id text PRIMARY KEY, key text NOT NULL, seq int NOT NULL,"
      " event_id bigint NOT NULL UNIQUE)");
  db.exec("CREATE TABLE key_counters (tenant text, key text, seq int NOT NULL DEFAULT 0, PRIMARY KEY (tenant, key))");
  db.exec("INSERT INTO key_counters (tenant, key) SELECT 't' || t, 'k' || lpad(k::text, 2, '0')"
          " FROM generate_series(0, $1::int - 1) t, generate_series(0, $2::int - 1) k",
          {std::to_string(kTenants), std::to_string(kKeysPerTenant)});
  // Not unique on event_id: an event applied twice shows up as two rows.
  db.exec(
      "CREATE TABLE effects (apply_id bigserial PRIMARY KEY, event_id bigint NOT NULL, tenant text NOT NULL,"
      " key text NOT NULL, seq int NOT NULL, order_id text NOT NULL, worker int NOT NULL, token uuid NOT NULL,"
      " applied_at timestamptz NOT NULL DEFAULT clock_timestamp())");
}

TEST(OutboxDelivery, KilledWorkersApplyEveryCommittedEventOnceInCommitOrderPerKey) {
  ScratchDatabase scratch;
  Connection admin(scratch.url());
  set_up_schema(admin);

  std::vector<WriterLog> writer_logs(kWriters);
  std::vector<WorkerLog> worker_logs(kWorkers);
  std::vector<std::unique_ptr<WorkerControl>> controls;
  for (int w = 0; w < kWorkers; ++w) controls.push_back(std::make_unique<WorkerControl>());
  KillerLog killer_log;
  std::atomic<bool> stop_workers{false}, stop_killer{false};

  const auto started = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back(
        [&, w] { ConsumerWorker(w, scratch.url(), *controls[w], stop_workers, worker_logs[w]).run(); });
  }
  std::thread killer([&] { Killer(scratch.url(), controls, stop_killer, killer_log).run(); });
  {
    std::vector<std::thread> writers;
    for (int i = 0; i < kWriters; ++i) writers.emplace_back([&, i] { Writer(i, scratch.url(), writer_logs[i]).run(); });
    for (auto& t : writers) t.join();
  }
  const double write_seconds = std::chrono::duration<double>(Clock::now() - started).count();

  // Drain under the killer, until every committed event is acked.
  Lag lag = read_lag(admin);
  const auto drain_started = Clock::now();
  auto next_report = drain_started;
  while (lag.backlog != 0 && Clock::now() - drain_started < kDrainTimeout) {
    if (Clock::now() >= next_report) {
      std::printf("outbox: drain %.0f s: backlog=%lld claimed_groups=%lld retrying_groups=%lld dead_letters=%lld\n",
                  std::chrono::duration<double>(Clock::now() - drain_started).count(), lag.backlog,
                  lag.claimed_groups, lag.retrying_groups, lag.dead_letters);
      std::fflush(stdout);
      next_report += std::chrono::seconds(5);
    }
    sleep_ms(250);
    lag = read_lag(admin);
  }
  stop_killer = true;
  killer.join();
  stop_workers = true;
  for (auto& t : workers) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();

  std::vector<Emitted> committed;
  std::vector<long long> rolled_back;
  long commits = 0, rollbacks = 0, server_rollbacks = 0, savepoint_rollbacks = 0;
  std::vector<std::string> failures;
  for (const auto& log : writer_logs) {
    commits += log.commits;
    rollbacks += log.rollbacks;
    server_rollbacks += log.server_rollbacks;
    savepoint_rollbacks += log.savepoint_rollbacks;
    committed.insert(committed.end(), log.committed.begin(), log.committed.end());
    rolled_back.insert(rolled_back.end(), log.rolled_back.begin(), log.rolled_back.end());
    failures.insert(failures.end(), log.failures.begin(), log.failures.end());
  }
  WorkerLog sum;
  for (const auto& log : worker_logs) {
    sum.claims += log.claims;
    sum.empty_claims += log.empty_claims;
    sum.delivered += log.delivered;
    sum.redelivered += log.redelivered;
    sum.applied += log.applied;
    sum.skipped += log.skipped;
    sum.fenced += log.fenced;
    sum.not_claimed += log.not_claimed;
    sum.connection_lost += log.connection_lost;
    for (int p = 0; p < kPoints; ++p) sum.stalls[p] += log.stalls[p];
    for (const auto& [state, n] : log.lost_by_state) sum.lost_by_state[state] += n;
    failures.insert(failures.end(), log.failures.begin(), log.failures.end());
  }
  failures.insert(failures.end(), killer_log.failures.begin(), killer_log.failures.end());
  long kills = 0;
  std::string kill_text;
  for (int p = kAnytime; p < kPoints; ++p) {
    kills += killer_log.kills[p];
    kill_text += std::string(" ") + kPointNames[p] + "=" + std::to_string(killer_log.kills[p]);
  }
  std::string stall_text;
  for (int p = kAfterClaim; p < kPoints; ++p) {
    stall_text += std::string(" ") + kPointNames[p] + "=" + std::to_string(sum.stalls[p]);
  }
  std::string lost_text;
  for (const auto& [state, n] : sum.lost_by_state) lost_text += " " + state + "=" + std::to_string(n);
  std::printf(
      "outbox: %d writers, %d workers, %.1f s (writes %.1f s): events committed=%zu rolled_back=%zu"
      " (txns committed=%ld rolled_back=%ld by_server=%ld savepoint_rolled_back=%ld);"
      " claims=%ld (empty %ld) delivered=%ld redelivered=%ld"
      " applied=%ld consume_once_false=%ld fenced=%ld not_claimed=%ld; stalls:%s; kills=%ld (%s; missed %ld)"
      " connection errors:%s; lag backlog=%lld dead_letters=%lld\n",
      kWriters, kWorkers, seconds, write_seconds, committed.size(), rolled_back.size(), commits, rollbacks,
      server_rollbacks, savepoint_rollbacks, sum.claims, sum.empty_claims, sum.delivered, sum.redelivered,
      sum.applied, sum.skipped, sum.fenced, sum.not_claimed, stall_text.c_str(), kills, kill_text.c_str() + 1,
      killer_log.missed,
      lost_text.empty() ? " none" : lost_text.c_str(), lag.backlog, lag.dead_letters);
  std::fflush(stdout);

  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
  EXPECT_EQ(failures.size(), 0u);
  EXPECT_EQ(committed.size() + rolled_back.size(), static_cast<std::size_t>(kWriters) * kEventsPerWriter);
  EXPECT_GT(rolled_back.size(), 0u);
  EXPECT_GT(kills, 0);

  const Lag final_lag = read_lag(admin);
  EXPECT_EQ(final_lag.backlog, 0) << "committed events left unacked after the drain";
  EXPECT_EQ(final_lag.dead_letters, 0);
  check_outcome(admin, committed, rolled_back);
}

}  // namespace
}  // namespace idem::it
