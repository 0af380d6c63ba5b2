// idem::OutboxConsumer (client/) on a real server: woken by the emitting commit's NOTIFY, correct
// by polling alone, a failing handler's event nacked until it is a dead letter while the others
// are applied once, and a redelivery skipped by consume_once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "idem/outbox_consumer.hpp"
#include "tests/integration/pq.hpp"

namespace idem::it {
namespace {

void setup(Connection& c, int max_attempts) {
  c.exec("SELECT idem.create_topic('orders')");
  c.exec("SELECT idem.create_consumer('sync', ARRAY['orders'], " + std::to_string(max_attempts) + ")");
  c.exec("CREATE TABLE applied (event_id bigint NOT NULL, order_id text NOT NULL)");
}

void emit(Connection& c, const std::string& order) {
  c.exec("SELECT idem.emit('acme', 'orders', jsonb_build_object('order_id', $1::text), $1)", {order});
}

// Runs the worker on its own thread until stop(); the handler records each event it applies.
struct Worker {
  Worker(const std::string& url, bool listen, std::function<void(SqlTransaction&, const OutboxEvent&)> on_event)
      : consumer(url, [&] {
          OutboxConsumerOptions o;
          o.consumer = "sync";
          o.batch = 10;
          o.listen = listen;
          o.idle_poll = std::chrono::milliseconds(60000);  // only a notification wakes it early
          o.idle_poll_without_listen = std::chrono::milliseconds(200);
          return o;
        }()),
        handler(std::move(on_event)),
        thread([this] { consumer.run(handler); }) {}
  ~Worker() {
    consumer.stop();
    thread.join();
  }
  OutboxConsumer consumer;
  OutboxConsumer::Handler handler;
  std::thread thread;
};

// Polls `done` for up to 30 s (a bound, not a timing assertion: the outcome is checked after).
template <typename F>
void wait_until(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void record(SqlTransaction& tx, const OutboxEvent& e) {
  tx.exec("INSERT INTO applied VALUES ($1, $2::jsonb ->> 'order_id')", {std::to_string(e.event_id), e.payload});
}

TEST(OutboxConsumer, ListeningWorkerIsWokenByTheEmittingCommit) {
  ScratchDatabase db;
  Connection c(db.url());
  setup(c, 5);
  std::atomic<int> seen{0};
  Worker w(db.url(), true, [&](SqlTransaction& tx, const OutboxEvent& e) {
    record(tx, e);
    ++seen;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the worker has claimed once and waits
  emit(c, "ord-1");
  // The handler counts the event before the worker commits it: wait for the commit and the ack.
  wait_until([&] {
    return c.exec("SELECT count(*)::int AS n FROM applied").integer(0, "n") == 1 &&
           c.exec("SELECT backlog::int AS n FROM idem.outbox_lag").integer(0, "n") == 0;
  });
  ASSERT_EQ(seen.load(), 1);
  const OutboxConsumerStats s = w.consumer.stats();
  // The idle poll is 60 s: only the NOTIFY can have woken it for this event.
  EXPECT_GE(s.woken_by_notify, 1u);
  EXPECT_EQ(s.woken_by_poll, 0u);
  EXPECT_EQ(c.exec("SELECT count(*)::int AS n FROM applied").integer(0, "n"), 1);
  EXPECT_EQ(c.exec("SELECT backlog::int AS n FROM idem.outbox_lag").integer(0, "n"), 0);
}

TEST(OutboxConsumer, PollingWorkerWithoutListenAppliesEveryEventOnce) {
  ScratchDatabase db;
  Connection c(db.url());
  setup(c, 5);
  std::atomic<int> seen{0};
  Worker w(db.url(), false, [&](SqlTransaction& tx, const OutboxEvent& e) {
    record(tx, e);
    ++seen;
  });
  for (int i = 0; i < 25; ++i) emit(c, "ord-" + std::to_string(i));
  // The handler counts an event before the worker commits its batch: wait for the commits.
  wait_until([&] { return c.exec("SELECT count(*)::int AS n FROM applied").integer(0, "n") == 25; });
  EXPECT_EQ(seen.load(), 25);
  const OutboxConsumerStats s = w.consumer.stats();
  EXPECT_EQ(s.woken_by_notify, 0u);
  EXPECT_EQ(c.exec("SELECT count(*)::int AS n FROM applied").integer(0, "n"), 25);
  EXPECT_EQ(c.exec("SELECT count(DISTINCT event_id)::int AS n FROM applied").integer(0, "n"), 25);
  // In commit order: one writer, so event ids rise with it.
  EXPECT_EQ(c.exec("SELECT count(*)::int AS n FROM (SELECT order_id, row_number() OVER (ORDER BY event_id) AS r FROM applied) a"
                   " WHERE order_id <> 'ord-' || (r - 1)")
                .integer(0, "n"),
            0);
}

TEST(OutboxConsumer, FailingHandlerIsNackedToADeadLetterAndTheGroupMovesOn) {
  ScratchDatabase db;
  Connection c(db.url());
  setup(c, 3);
  for (const char* o : {"ord-a", "ord-poison", "ord-b"}) emit(c, o);
  std::atomic<int> attempts{0};
  Worker w(db.url(), true, [&](SqlTransaction& tx, const OutboxEvent& e) {
    if (e.payload.find("ord-poison") != std::string::npos) {
      ++attempts;
      throw std::runtime_error("the ledger refused ord-poison");
    }
    record(tx, e);
  });
  // Each nack waits 1 s, then 2 s before the next attempt (the default backoff).
  wait_until([&] { return c.exec("SELECT count(*)::int AS n FROM idem.outbox_dead_letters").integer(0, "n") == 1 &&
                          c.exec("SELECT count(*)::int AS n FROM applied").integer(0, "n") == 2; });
  EXPECT_EQ(attempts.load(), 3);
  EXPECT_EQ(c.exec("SELECT string_agg(order_id, ',' ORDER BY event_id) AS s FROM applied").text(0, "s"), "ord-a,ord-b");
  const Result d = c.exec("SELECT attempts, last_error, payload ->> 'order_id' AS o FROM idem.outbox_dead_letters");
  EXPECT_EQ(d.integer(0, "attempts"), 3);
  EXPECT_EQ(d.text(0, "last_error"), "the ledger refused ord-poison");
  EXPECT_EQ(d.text(0, "o"), "ord-poison");
  EXPECT_EQ(w.consumer.stats().failed, 3u);
  EXPECT_EQ(c.exec("SELECT backlog::int AS b, dead_letters::int AS d FROM idem.outbox_lag").integer(0, "d"), 1);
}

TEST(OutboxConsumer, AFailureInOneGroupLeavesTheOtherGroupsOfTheClaimAlone) {
  ScratchDatabase db;
  Connection c(db.url());
  setup(c, 2);
  // One claim gets both tenants' events; tenant a's second event always fails.
  for (const char* t : {"a", "b"}) {
    for (int i = 1; i <= 2; ++i) {
      c.exec("SELECT idem.emit($1, 'orders', jsonb_build_object('order_id', $1 || '-' || $2::text), $1)", {t, std::to_string(i)});
    }
  }
  Worker w(db.url(), true, [&](SqlTransaction& tx, const OutboxEvent& e) {
    if (e.payload.find("a-2") != std::string::npos) throw std::runtime_error("a-2 refused");
    record(tx, e);
  });
  wait_until([&] { return c.exec("SELECT count(*)::int AS n FROM idem.outbox_dead_letters").integer(0, "n") == 1 &&
                          c.exec("SELECT count(*)::int AS n FROM applied").integer(0, "n") == 3; });
  EXPECT_EQ(c.exec("SELECT string_agg(order_id, ',' ORDER BY order_id) AS s FROM applied").text(0, "s"), "a-1,b-1,b-2");
  EXPECT_EQ(c.exec("SELECT string_agg(tenant_id || ':' || (payload ->> 'order_id'), ',') AS s FROM idem.outbox_dead_letters").text(0, "s"),
            "a:a-2");
  EXPECT_EQ(c.exec("SELECT last_error FROM idem.outbox_dead_letters").text(0, "last_error"), "a-2 refused");
  EXPECT_EQ(w.consumer.stats().lost_claims, 0u);
  EXPECT_EQ(c.exec("SELECT backlog::int AS n FROM idem.outbox_lag").integer(0, "n"), 0);
}

TEST(OutboxConsumer, AReplayThatFailsAgainLeavesTheGroupsOtherEventsToBeApplied) {
  ScratchDatabase db;
  Connection c(db.url());
  setup(c, 1);
  const auto poison_fails = [&](SqlTransaction& tx, const OutboxEvent& e) {
    if (e.payload.find("poison") != std::string::npos) throw std::runtime_error("still refused");
    record(tx, e);
  };
  emit(c, "poison");
  {
    Worker w(db.url(), true, poison_fails);
    wait_until([&] { return c.exec("SELECT count(*)::int AS n FROM idem.outbox_dead_letters").integer(0, "n") == 1; });
  }
  emit(c, "ord-ok");
  c.exec("SELECT idem.outbox_replay('sync', (SELECT event_id FROM idem.outbox_dead_letters))");
  {
    // One claim: the replay first, then ord-ok of the same group, under one token.
    Worker w(db.url(), true, poison_fails);
    wait_until([&] { return c.exec("SELECT count(*)::int AS n FROM applied").integer(0, "n") == 1 &&
                            c.exec("SELECT attempts FROM idem.outbox_dead_letters").integer(0, "attempts") == 2; });
  }
  EXPECT_EQ(c.exec("SELECT string_agg(order_id, ',') AS s FROM applied").text(0, "s"), "ord-ok");
  const Result d = c.exec("SELECT count(*)::int AS n, max(attempts) AS a, bool_and(replay_requested_at IS NULL) AS dead FROM idem.outbox_dead_letters");
  EXPECT_EQ(d.integer(0, "n"), 1);  // ord-ok never became one
  EXPECT_EQ(d.integer(0, "a"), 2);
  EXPECT_EQ(d.text(0, "dead"), "t");
  EXPECT_EQ(c.exec("SELECT backlog::int AS n FROM idem.outbox_lag").integer(0, "n"), 0);
}

TEST(OutboxConsumer, RedeliveryOfAnAppliedEventIsSkipped) {
  ScratchDatabase db;
  Connection c(db.url());
  setup(c, 5);
  emit(c, "ord-1");
  // A worker that applied the event and died before its ack: consume_once ran, the claim expires.
  const Result claimed = c.exec("SELECT event_id, token FROM idem.claim('sync', NULL, 10, '50 milliseconds')");
  ASSERT_EQ(claimed.size(), 1u);
  c.exec("SELECT idem.consume_once('sync', $1, $2::uuid)", {claimed.text(0, "event_id"), claimed.text(0, "token")});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::atomic<int> seen{0};
  {
    Worker w(db.url(), true, [&](SqlTransaction&, const OutboxEvent&) { ++seen; });
    wait_until([&] { return w.consumer.stats().skipped_redeliveries == 1; });
    EXPECT_EQ(w.consumer.stats().skipped_redeliveries, 1u);
  }
  EXPECT_EQ(seen.load(), 0);
  EXPECT_EQ(c.exec("SELECT backlog::int AS n FROM idem.outbox_lag").integer(0, "n"), 0);
}

}  // namespace
}  // namespace idem::it
