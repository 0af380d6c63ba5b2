// Multi-step use: client.begin leases the key in a committed transaction; checkpoint, complete and
// release are each their own; a stale holder gets LeaseLost; a crashed attempt is resumed.
#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/client_support.hpp"

namespace idem::it {
namespace {

const std::string kKey = "lease-key-00000000000001";

Lease lease_of(std::variant<Lease, Response>&& begun) {
  if (auto* r = std::get_if<Response>(&begun)) {
    throw std::runtime_error("begin answered " + std::to_string(r->status) + ": " + r->body);
  }
  return std::move(std::get<Lease>(begun));
}

TEST(ClientLease, BeginCommitsTheLeaseCheckpointThenCompleteWithTheLastWrites) {
  ClientDatabase db;
  Client client(db.url());
  Lease lease = lease_of(client.begin(order_request(kKey)));
  EXPECT_FALSE(lease.resumed());
  const std::string processor_key = lease.handler_key();
  EXPECT_EQ(processor_key.rfind("idem_", 0), 0u);

  // Committed: another request with the key is told to wait while the external call runs.
  std::atomic<int> runs{0};
  EXPECT_EQ(client.run(order_request(kKey), order_handler(runs, "x")).status, 409);
  const auto begun = client.begin(order_request(kKey));
  ASSERT_TRUE(std::holds_alternative<Response>(begun));
  EXPECT_EQ(std::get<Response>(begun).status, 409);

  lease.checkpoint("charge_created", R"({"charge_id":"ch_1"})");
  const Response done = lease.complete([&](Attempt& a) {
    a.exec("INSERT INTO orders VALUES ('ord_1', 1999)");
    a.emit("orders.created", R"({"order_id":"ord_1"})", "ord_1");
    return created_response("ord_1");
  });
  EXPECT_EQ(done.status, 201);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.outbox_events"), 1);

  const Response replay = client.run(order_request(kKey), order_handler(runs, "x"));
  EXPECT_EQ(replay.headers, with_replay_headers(created_response("ord_1").headers));
  EXPECT_EQ(replay.body, created_response("ord_1").body);
  // begin answers a replay in one round trip (acquire outside a transaction block).
  const auto before = client.stats().round_trips;
  const auto again = client.begin(order_request(kKey));
  EXPECT_EQ(client.stats().round_trips - before, 1u);
  ASSERT_TRUE(std::holds_alternative<Response>(again));
  EXPECT_EQ(std::get<Response>(again).headers, with_replay_headers(created_response("ord_1").headers));
  EXPECT_EQ(runs, 0);
  // The finished lease is fenced: nothing more can be recorded with it.
  EXPECT_THROW(lease.complete(created_response("ord_2")), LeaseLost);
}

TEST(ClientLease, CompleteWithAResponseIsOneRoundTripAndReplays) {
  ClientDatabase db;
  Client client(db.url());
  auto begun = client.begin(order_request(kKey));
  Lease lease = lease_of(std::move(begun));
  const auto before = client.stats().round_trips;
  lease.complete(created_response("ord_1"));
  EXPECT_EQ(client.stats().round_trips - before, 1u);
  std::atomic<int> runs{0};
  EXPECT_EQ(client.run(order_request(kKey), order_handler(runs, "x")).body, created_response("ord_1").body);
  EXPECT_EQ(runs, 0);
}

TEST(ClientLease, ReleaseAfterACheckpointResumesThereWithTheSameProcessorKey) {
  ClientDatabase db;
  Client client(db.url());
  Lease first = lease_of(client.begin(order_request(kKey)));
  const std::string processor_key = first.handler_key();
  first.checkpoint("charge_created", R"({"charge_id":"ch_1"})");
  first.release("processor timeout");
  EXPECT_THROW(first.checkpoint("charge_captured"), LeaseLost);

  Lease second = lease_of(client.begin(order_request(kKey)));
  EXPECT_TRUE(second.resumed());
  EXPECT_EQ(second.recovery_point(), "charge_created");
  EXPECT_EQ(second.recovery_data(), R"({"charge_id": "ch_1"})");
  EXPECT_EQ(second.handler_key(), processor_key);
  EXPECT_NE(second.fencing_token(), first.fencing_token());
  EXPECT_EQ(second.complete(created_response("ord_1")).status, 201);
}

TEST(ClientLease, ReleaseBeforeTheProcessorWasCalledIsAFreshAttempt) {
  ClientDatabase db;
  Client client(db.url());
  Lease first = lease_of(client.begin(order_request(kKey)));
  first.release("our own checks refused the card", /*handler_called=*/false);
  // A fresh attempt: any payload, not a resume.
  Lease second = lease_of(client.begin(order_request(kKey, R"({"amount":5,"cart":"c_42"})")));
  EXPECT_FALSE(second.resumed());
  EXPECT_FALSE(second.recovery_point().has_value());
  EXPECT_EQ(second.handler_key(), first.handler_key());
}

// Bug regression: a timed-out charge that did go through was matched to the
// next attempt's other amount under the same processor key.
TEST(ClientLease, ReleaseAfterAProcessorTimeoutPinsThePayload) {
  ClientDatabase db;
  Client client(db.url());
  Lease first = lease_of(client.begin(order_request(kKey)));
  const std::string processor_key = first.handler_key();
  first.release("processor timeout");  // the processor may have charged
  auto other = client.begin(order_request(kKey, R"({"amount":5,"cart":"c_42"})"));
  ASSERT_TRUE(std::holds_alternative<Response>(other));
  EXPECT_EQ(std::get<Response>(other).status, 422);
  Lease same = lease_of(client.begin(order_request(kKey)));
  EXPECT_FALSE(same.resumed());
  EXPECT_EQ(same.handler_key(), processor_key);
}

// Bug regression: the processor key was fetched at first use, after the lease
// could have been taken over and the record moved to a new generation.
TEST(ClientLease, TheProcessorKeyComesWithTheLease) {
  ClientDatabase db;
  ClientOptions options;
  options.lease = std::chrono::milliseconds(100);
  options.ttl = std::chrono::milliseconds(100);
  Client client(db.url(), options);
  Lease stale = lease_of(client.begin(order_request(kKey)));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // lease and TTL run out
  Lease next = lease_of(client.begin(order_request(kKey, R"({"amount":5,"cart":"c_42"})")));
  EXPECT_NE(stale.handler_key(), next.handler_key());  // generation 1's key, not generation 2's
  EXPECT_EQ(stale.handler_key().rfind("idem_", 0), 0U);
  EXPECT_THROW(stale.checkpoint("charge_created"), LeaseLost);
}

TEST(ClientLease, CrashedMultiStepAttemptIsResumedAndTheStaleHolderFenced) {
  ClientDatabase db;
  ClientOptions options;
  options.lease = std::chrono::milliseconds(300);
  Client client(db.url(), options);
  Lease crashed = lease_of(client.begin(order_request(kKey)));
  crashed.checkpoint("charge_created", R"({"charge_id":"ch_9"})");
  // The holder stops here (its process died); the lease runs out.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  int resumed_runs = 0;
  const Response r = client.run(order_request(kKey), [&](Attempt& a) {
    ++resumed_runs;
    EXPECT_TRUE(a.resumed());
    EXPECT_EQ(a.recovery_point(), "charge_created");
    EXPECT_EQ(a.recovery_data(), R"({"charge_id": "ch_9"})");
    a.exec("INSERT INTO orders VALUES ('ord_9', 1999)");
    return created_response("ord_9");
  });
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(resumed_runs, 1);
  // The stale holder wakes up: every step is refused, nothing of it is recorded.
  try {
    crashed.complete(created_response("stale"));
    FAIL() << "no exception";
  } catch (const LeaseLost& e) {
    EXPECT_EQ(e.sqlstate(), "IK005");
    EXPECT_EQ(problem_response(e).status, 503);
  }
  EXPECT_THROW(crashed.checkpoint("charge_captured"), LeaseLost);
  EXPECT_THROW(crashed.release("late"), LeaseLost);
  EXPECT_THROW(crashed.complete([](Attempt& a) {
    a.exec("INSERT INTO orders VALUES ('stale', 1)");
    return created_response("stale");
  }), LeaseLost);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);
  std::atomic<int> runs{0};
  EXPECT_EQ(client.run(order_request(kKey), order_handler(runs, "x")).body, created_response("ord_9").body);
}

TEST(ClientLease, BeginRefusalsAreTheSameAnswersAsRun) {
  ClientDatabase db;
  ClientOptions options;
  options.allow_missing_key = true;
  Client client(db.url(), options);
  Request keyless = order_request(kKey);
  keyless.idempotency_key.reset();
  const auto missing = client.begin(keyless);
  ASSERT_TRUE(std::holds_alternative<Response>(missing));
  EXPECT_EQ(std::get<Response>(missing).status, 400);
  const auto invalid = client.begin(order_request("short"));
  ASSERT_TRUE(std::holds_alternative<Response>(invalid));
  EXPECT_EQ(std::get<Response>(invalid).status, 400);
  lease_of(client.begin(order_request(kKey))).complete(created_response("ord_1"));
  const auto other = client.begin(order_request(kKey, R"({"amount":1})"));
  ASSERT_TRUE(std::holds_alternative<Response>(other));
  EXPECT_EQ(std::get<Response>(other).status, 422);
}

}  // namespace
}  // namespace idem::it
