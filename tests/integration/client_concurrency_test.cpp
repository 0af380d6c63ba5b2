// idem::Client shared by many threads: one key raced by 64 threads runs its handler once; the
// pool's checkout waits and times out; a connection the server closed is replaced.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "tests/integration/client_support.hpp"

namespace idem::it {
namespace {

const std::string kKey = "race-key-0000000000000001";

TEST(ClientConcurrency, SixtyFourThreadsOneKeyRunTheHandlerOnce) {
  ClientDatabase db;
  ClientOptions options;
  options.pool_size = 8;
  options.acquire_timeout = std::chrono::seconds(60);
  Client client(db.url(), options);
  std::atomic<int> runs{0};
  std::atomic<int> busy_seen{0};
  const auto handler = [&](Attempt& a) {
    ++runs;
    a.exec("INSERT INTO orders VALUES ('ord_1', 1999)");
    // Hold the key until a contender has been told 409 (at most 10 s), whatever the scheduling.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (busy_seen == 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return created_response("ord_1");
  };
  // 48 threads race for the key; once they are done (the winner committed) 16 more ask again.
  constexpr int kThreads = 64;
  constexpr int kRacers = 48;
  std::vector<Response> responses(kThreads);
  std::vector<std::string> errors;
  std::mutex errors_mutex;
  const auto call = [&](int i) {
    try {
      responses[i] = client.run(order_request(kKey), handler);
      if (responses[i].status == 409) ++busy_seen;
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(errors_mutex);
      errors.push_back(e.what());
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kRacers; ++i) threads.emplace_back(call, i);
  for (auto& t : threads) t.join();
  threads.clear();
  for (int i = kRacers; i < kThreads; ++i) threads.emplace_back(call, i);
  for (auto& t : threads) t.join();
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(runs, 1);
  const Response winner = created_response("ord_1");
  int originals = 0, replays = 0, busy = 0;
  for (const Response& r : responses) {
    if (r.status == 201 && r.headers == winner.headers && r.body == winner.body) {
      ++originals;
    } else if (r.status == 201 && r.headers == with_replay_headers(winner.headers) && r.body == winner.body) {
      ++replays;
    } else if (r.status == 409 && r.header("Retry-After") && *r.header("Retry-After") == "2" &&
               r.body.find("\"code\":\"ERR_IDEMPOTENCY_IN_PROGRESS\"") != std::string::npos) {
      ++busy;
    } else {
      ADD_FAILURE() << "unexpected response " << r.status << ": " << r.body;
    }
  }
  EXPECT_EQ(originals, 1);
  EXPECT_EQ(originals + replays + busy, kThreads);
  EXPECT_GE(replays, kThreads - kRacers);
  EXPECT_GT(busy, 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);
  EXPECT_LE(client.stats().connections_opened, 8u);
}

TEST(ClientPool, CheckoutWaitsThenTimesOut) {
  ClientDatabase db;
  ClientOptions options;
  options.pool_size = 1;
  options.acquire_timeout = std::chrono::milliseconds(200);
  Client client(db.url(), options);
  std::atomic<bool> inside{false}, release{false};
  std::thread holder([&] {
    client.run(order_request("holder-key-00000000001"), [&](Attempt&) {
      inside = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return created_response("h");
    });
  });
  while (!inside) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> runs{0};
  EXPECT_THROW(client.run(order_request("waiter-key-00000000001"), order_handler(runs, "w")), PoolTimeout);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(190));
  EXPECT_LT(waited, std::chrono::milliseconds(2000));
  // A waiter gets the connection as soon as it is given back.
  std::thread waiter([&] { EXPECT_EQ(client.run(order_request("waiter-key-00000000002"), order_handler(runs, "w")).status, 201); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  release = true;
  holder.join();
  waiter.join();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(client.stats().connections_opened, 1u);
}

TEST(ClientPool, ConnectionClosedByTheServerIsReplaced) {
  ClientDatabase db;
  ClientOptions options;
  options.pool_size = 1;
  Client client(db.tagged_url("idem_client_pool_test"), options);
  std::atomic<int> runs{0};
  ASSERT_EQ(client.run(order_request("pool-key-000000000001"), order_handler(runs, "o1")).status, 201);
  Connection admin(db.url());
  const Result killed = admin.exec(
      "SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity"
      " WHERE application_name = 'idem_client_pool_test' AND datname = current_database()");
  ASSERT_EQ(killed.text(0, "count"), "1");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The idle connection is dead: the checkout's probe (no round trip) reads the server's FATAL
  // and EOF, and the run takes a new connection without sending anything on the dead one.
  const auto before = client.stats().round_trips;
  EXPECT_EQ(client.run(order_request("pool-key-000000000002"), order_handler(runs, "o2")).status, 201);
  EXPECT_EQ(client.stats().round_trips - before, 3u);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(client.stats().connections_opened, 2u);
  EXPECT_EQ(client.stats().connections_discarded, 1u);
}

}  // namespace
}  // namespace idem::it

namespace idem::it {
namespace {

// Bug regression: a replay's COMMIT is sent without waiting and its answer read
// at the connection's next checkout. That read happened under the pool's lock, so while one such
// COMMIT waited (here a deferred trigger sleeps in it; a synchronous standby away does the same)
// every other thread of the Client waited too. Now only the thread that took that connection
// waits: another opens a connection of its own and finishes before the COMMIT lands.
TEST(ClientPool, ASlowDeferredCommitStallsOnlyItsOwnConnection) {
  ClientDatabase db;
  Connection admin(db.url());
  admin.exec("CREATE FUNCTION slow_replay_audit() RETURNS trigger LANGUAGE plpgsql AS"
             " $$ BEGIN PERFORM pg_sleep(3); RETURN NULL; END $$");
  admin.exec("CREATE CONSTRAINT TRIGGER slow_replay_audit AFTER INSERT ON idem.mutations DEFERRABLE INITIALLY DEFERRED"
             " FOR EACH ROW WHEN (NEW.outcome = 'replay') EXECUTE FUNCTION slow_replay_audit()");
  ClientOptions options;
  options.pool_size = 2;
  Client client(db.url(), options);
  std::atomic<int> runs{0};
  ASSERT_EQ(client.run(order_request("slow-commit-key-00001"), order_handler(runs, "o1")).status, 201);
  ASSERT_EQ(client.run(order_request("slow-commit-key-00001"), order_handler(runs, "o1")).status, 201);  // replay
  // The replay's connection is idle with its COMMIT still sleeping. Thread 1 takes it (and waits
  // for that COMMIT); the main thread, a moment later, must not wait behind thread 1.
  std::thread first([&] { client.query("SELECT 1"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(client.query("SELECT 'second'").at(0).at(0), "second");
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.mutations WHERE outcome = 'replay'"), 0)
      << "the second query waited for the first connection's COMMIT";
  first.join();
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.mutations WHERE outcome = 'replay'"), 1);
  EXPECT_EQ(client.stats().deferred_commit_failures, 0u);
  EXPECT_EQ(client.stats().connections_opened, 2u);
}

}  // namespace
}  // namespace idem::it
