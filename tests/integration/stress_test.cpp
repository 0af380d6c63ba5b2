// The acceptance stress test: 32 connections race for the same 200 keys, each request one
// transaction (acquire; on a lease, the business write and complete, or a simulated crash), under
// mixed isolation levels. Every key must execute exactly once and every replay carry its bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/pq.hpp"

namespace idem::it {
namespace {

constexpr int kConnections = 32;
constexpr int kKeys = 200;
constexpr double kAbortProbability = 0.10;
constexpr int kMaxBusyAnswersPerKey = 5000;  // in_progress answers before a key counts as stuck
constexpr int kMaxRetriesPerKey = 500;       // 40001/40P01 before a key counts as stuck
constexpr std::uint64_t kSeed = 0x1de3b07e;
const char* const kTenant = "stress";

using Clock = std::chrono::steady_clock;

std::string key_name(int k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "stress-key-%06d", k);
  return buf;
}

// The same request body from every connection for a key (a different one would be a mismatch).
std::string payload(int k) {
  return R"({"order": {"sku": "sku-)" + std::to_string(k) + R"(", "qty": )" + std::to_string(k % 7 + 1) +
         R"(}, "currency": "EUR", "amount": )" + std::to_string(100 + k) + "}";
}

std::string headers_of(int conn) { return R"({"X-Conn": ")" + std::to_string(conn) + R"("})"; }

std::string order_id_of(int key, int conn) { return "ord-" + std::to_string(key) + "-c" + std::to_string(conn); }

// Bytes only the executing connection could have sent: its name and 16 random bytes with a NUL.
std::string body_of(int key, int conn, std::mt19937_64& rng) {
  std::string body = "order for " + key_name(key) + " by conn " + std::to_string(conn) + " ";
  std::uniform_int_distribution<int> byte(0, 255);
  std::string noise(16, '\0');
  for (char& c : noise) c = static_cast<char>(byte(rng));
  noise[std::uniform_int_distribution<int>(0, 15)(rng)] = '\0';
  return body + noise;
}

Isolation isolation_of(int conn) {
  static const Isolation kLevels[] = {Isolation::read_committed, Isolation::repeatable_read,
                                      Isolation::serializable};
  return kLevels[conn % 3];
}

// What a connection committed as the response of a key it executed.
struct Sent {
  int conn = -1;
  int attempt = 0;
  std::string headers;
  std::string body;
  std::string order_id;
};

struct Replay {
  int key;
  int status;
  std::string headers;
  std::string body;
  std::string order_id;
};

enum class Answer { none, executed, replayed };

// Everything one connection saw; merged and checked after the run (no sharing during it).
struct ConnLog {
  long requests = 0;
  long executions = 0;
  long aborts = 0;
  long busy = 0;
  std::map<std::string, long> retries;  // by SQLSTATE
  long unique_violations = 0;
  std::vector<std::pair<int, Sent>> committed;
  std::vector<Replay> replays;
  std::vector<Answer> answers = std::vector<Answer>(kKeys, Answer::none);
  std::vector<std::string> failures;
};

// Starts all workers at once, after every connection is open and prepared.
class StartGate {
 public:
  void arrive_and_wait(int total) {
    std::unique_lock<std::mutex> lock(mu_);
    if (++arrived_ == total) cv_.notify_all();
    cv_.wait(lock, [&] { return arrived_ >= total; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
};

enum class Step { answered, busy, retry, aborted, failed };

class Worker {
 public:
  Worker(int conn, std::string url, ConnLog& log) : conn_(conn), url_(std::move(url)), log_(log), rng_(kSeed + conn) {}

  void run(StartGate& gate) {
    std::optional<Connection> db;
    try {
      db.emplace(url_);
      db->prepare("acquire",
                  "SELECT outcome, handle, attempt, response_status, response_headers::text AS response_headers,"
                  " response_body, order_id FROM idem.acquire($1, $2, $3::jsonb)");
      db->prepare("record", "INSERT INTO executions (key, conn, attempt) VALUES ($1, $2::int, $3::int)");
      db->prepare("complete", "SELECT idem.complete($1, $2::int, 201, $3::jsonb, $4::bytea, $5)");
    } catch (const std::exception& e) {
      log_.failures.push_back("conn " + std::to_string(conn_) + " could not connect: " + e.what());
      gate.arrive_and_wait(kConnections);
      return;
    }
    gate.arrive_and_wait(kConnections);
    serve_all(*db);
  }

 private:
  struct Pending {
    int key;
    int busy = 0;
    int retries = 0;
    Clock::time_point not_before{};
  };

  void serve_all(Connection& db) {
    std::vector<int> order(kKeys);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng_);
    std::deque<Pending> queue;
    for (int k : order) queue.push_back(Pending{k});

    while (!queue.empty()) {
      Pending p = queue.front();
      queue.pop_front();
      if (p.not_before > Clock::now()) std::this_thread::sleep_until(p.not_before);
      switch (request(db, p.key)) {
        case Step::answered:
        case Step::failed:
          break;
        case Step::aborted:  // our simulated crash left the key free: ask again later
          queue.push_back(p);
          break;
        case Step::busy:
          if (++p.busy > kMaxBusyAnswersPerKey) {
            fail(p.key, "still in_progress after " + std::to_string(kMaxBusyAnswersPerKey) + " answers");
            break;
          }
          p.not_before = Clock::now() + std::chrono::microseconds(500 + rng_() % 1500);
          queue.push_back(p);
          break;
        case Step::retry:
          if (++p.retries > kMaxRetriesPerKey) {
            fail(p.key, "still failing with 40001/40P01 after " + std::to_string(kMaxRetriesPerKey) + " tries");
            break;
          }
          p.not_before = Clock::now() + std::chrono::microseconds(rng_() % 1000);
          queue.push_front(p);  // the winner is committed by now, or will be soon: ask again soon
          break;
      }
    }
  }

  // One request for one key: one transaction.
  Step request(Connection& db, int key) {
    const std::string name = key_name(key);
    ++log_.requests;
    try {
      auto tx = db.begin(isolation_of(conn_));
      const Result r = tx->exec_prepared("acquire", {kTenant, name, payload(key)});
      const std::string outcome = r.text(0, "outcome");
      if (outcome == "acquired" || outcome == "resumed") {
        const int attempt = r.integer(0, "attempt");
        tx->exec_prepared("record", {name, std::to_string(conn_), std::to_string(attempt)});
        if (std::uniform_real_distribution<double>(0, 1)(rng_) < kAbortProbability) {
          tx->abort();
          ++log_.aborts;
          return Step::aborted;
        }
        Sent sent{conn_, attempt, headers_of(conn_), body_of(key, conn_, rng_), order_id_of(key, conn_)};
        tx->exec_prepared("complete", {r.text(0, "handle"), std::to_string(attempt), sent.headers,
                                       bytea_param(sent.body), sent.order_id});
        tx->commit();
        ++log_.executions;
        log_.committed.emplace_back(key, std::move(sent));
        log_.answers[key] = Answer::executed;
        return Step::answered;
      }
      if (outcome == "replay") {
        Replay replay{key, r.integer(0, "response_status"), r.text(0, "response_headers"),
                      r.bytes(0, "response_body"), r.text(0, "order_id")};
        tx->commit();  // a read-only SERIALIZABLE commit can still fail: count it only after
        log_.replays.push_back(std::move(replay));
        log_.answers[key] = Answer::replayed;
        return Step::answered;
      }
      if (outcome == "in_progress") {
        tx->abort();
        ++log_.busy;
        return Step::busy;
      }
      fail(key, "unexpected outcome " + outcome);
      return Step::failed;
    } catch (const DbError& e) {
      if (e.sqlstate() == "23505") ++log_.unique_violations;
      if (is_retryable(e)) {
        ++log_.retries[e.sqlstate()];
        return Step::retry;
      }
      fail(key, std::string(e.in_doubt() ? "commit in doubt: " : "SQLSTATE ") + e.sqlstate() + ": " + e.what());
      return Step::failed;
    } catch (const std::exception& e) {
      fail(key, e.what());
      return Step::failed;
    }
  }

  void fail(int key, const std::string& what) {
    log_.failures.push_back("conn " + std::to_string(conn_) + " (" + isolation_name(isolation_of(conn_)) + ") key " +
                            key_name(key) + ": " + what);
  }

  int conn_;
  std::string url_;
  ConnLog& log_;
  std::mt19937_64 rng_;
};

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

TEST(AcquireStress, ThirtyTwoConnectionsTwoHundredKeysExecuteEachKeyExactlyOnce) {
  ScratchDatabase db;
  Connection admin(db.url());
  admin.exec("CREATE TABLE executions (key text NOT NULL, conn int NOT NULL, attempt int NOT NULL)");

  std::vector<ConnLog> logs(kConnections);
  StartGate gate;
  const auto started = Clock::now();
  {
    std::vector<std::thread> threads;
    for (int c = 0; c < kConnections; ++c) {
      threads.emplace_back([&, c] { Worker(c, db.url(), logs[c]).run(gate); });
    }
    for (auto& t : threads) t.join();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();

  // Merge what the connections saw.
  long requests = 0, executions = 0, aborts = 0, busy = 0, replays = 0, unique_violations = 0;
  std::map<std::string, long> retries;
  std::map<int, std::vector<Sent>> winners;
  std::vector<std::string> failures;
  for (int c = 0; c < kConnections; ++c) {
    const ConnLog& log = logs[c];
    requests += log.requests;
    executions += log.executions;
    aborts += log.aborts;
    busy += log.busy;
    replays += static_cast<long>(log.replays.size());
    unique_violations += log.unique_violations;
    for (const auto& [state, n] : log.retries) retries[state] += n;
    for (const auto& [key, sent] : log.committed) winners[key].push_back(sent);
    failures.insert(failures.end(), log.failures.begin(), log.failures.end());
  }
  std::string retry_text;
  for (const auto& [state, n] : retries) retry_text += " " + state + "=" + std::to_string(n);
  std::printf(
      "stress: %d conns x %d keys in %.1f s: requests=%ld executions=%ld aborted=%ld replays=%ld in_progress=%ld "
      "retries:%s unique_violations=%ld failures=%zu\n",
      kConnections, kKeys, seconds, requests, executions, aborts, replays, busy,
      retry_text.empty() ? " none" : retry_text.c_str(), unique_violations, failures.size());

  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
  EXPECT_EQ(unique_violations, 0) << "SQLSTATE 23505 reached a client";

  // Exactly one committed execution per key, in memory and in the business table.
  EXPECT_EQ(executions, kKeys);
  for (int k = 0; k < kKeys; ++k) {
    const auto it = winners.find(k);
    ASSERT_NE(it, winners.end()) << key_name(k) << " was never executed";
    ASSERT_EQ(it->second.size(), 1u) << key_name(k) << " was executed and committed " << it->second.size()
                                      << " times (conns " << it->second[0].conn << ", " << it->second[1].conn << ")";
    auto tx = admin.begin();
    const Result n = tx->exec("SELECT count(*) AS n, min(conn) AS conn FROM executions WHERE key = $1", {key_name(k)});
    EXPECT_EQ(n.integer(0, "n"), 1) << key_name(k);
    EXPECT_EQ(n.integer(0, "conn"), it->second[0].conn) << key_name(k);
  }

  // idem.keys holds each winner's response, byte for byte.
  const Result rows = admin.exec(
      "SELECT client_key, status, response_status, response_headers::text AS response_headers, response_body,"
      " order_id FROM idem.keys WHERE tenant_id = $1",
      {kTenant});
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kKeys));
  std::map<std::string, std::size_t> row_of;
  for (std::size_t i = 0; i < rows.size(); ++i) row_of[rows.text(i, "client_key")] = i;
  for (int k = 0; k < kKeys; ++k) {
    const auto row = row_of.find(key_name(k));
    ASSERT_NE(row, row_of.end()) << key_name(k) << " has no row in idem.keys";
    const Sent& sent = winners[k][0];
    const std::size_t i = row->second;
    EXPECT_EQ(rows.text(i, "status"), "resolved") << key_name(k);
    EXPECT_EQ(rows.integer(i, "response_status"), 201) << key_name(k);
    EXPECT_EQ(rows.text(i, "response_headers"), sent.headers) << key_name(k);
    EXPECT_EQ(rows.bytes(i, "response_body"), sent.body) << key_name(k);
    EXPECT_EQ(rows.text(i, "order_id"), sent.order_id) << key_name(k);
  }

  // Every replay any connection saw is the winner's committed response; every connection got an
  // answer for every key: its own committed execution or a replay.
  long answers = 0;
  for (int c = 0; c < kConnections; ++c) {
    for (const Replay& r : logs[c].replays) {
      const Sent& sent = winners[r.key][0];
      EXPECT_EQ(r.status, 201) << "conn " << c << " " << key_name(r.key);
      EXPECT_EQ(r.headers, sent.headers) << "conn " << c << " " << key_name(r.key);
      EXPECT_EQ(r.body, sent.body) << "conn " << c << " " << key_name(r.key) << ": replayed " << printable(r.body)
                                   << ", winner conn " << sent.conn << " sent " << printable(sent.body);
      EXPECT_EQ(r.order_id, sent.order_id) << "conn " << c << " " << key_name(r.key);
    }
    for (int k = 0; k < kKeys; ++k) {
      const Answer a = logs[c].answers[k];
      EXPECT_NE(a, Answer::none) << "conn " << c << " never got an answer for " << key_name(k);
      if (a == Answer::executed) {
        EXPECT_EQ(winners[k][0].conn, c) << key_name(k);
      }
      if (a != Answer::none) ++answers;
    }
  }
  EXPECT_EQ(answers, static_cast<long>(kConnections) * kKeys);
  EXPECT_EQ(replays, static_cast<long>(kConnections) * kKeys - kKeys);
}

}  // namespace
}  // namespace idem::it
