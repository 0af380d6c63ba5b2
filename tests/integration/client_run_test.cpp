// idem::Client::run on a real server: every outcome of acquire and its HTTP answer, byte for
// byte; a throwing handler leaves the key free; the round trips each path costs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <variant>

#include <nlohmann/json.hpp>

#include "tests/integration/client_support.hpp"

namespace idem::it {
namespace {

const std::string kKey = "c0ffee00-1111-4222-8333-444455556666";

// A problem body as the client renders it; stored: the "stored" member's value, "" for none.
std::string problem(int status, const std::string& code, const std::string& title, const std::string& detail,
                    const std::string& stored = "false") {
  return R"({"type":"urn:pg-idempotency:error:)" + code + R"(","title":")" + title + R"(","status":)" +
         std::to_string(status) + R"(,"detail":")" + detail + R"(","code":")" + code + R"(")" +
         (stored.empty() ? "" : R"(,"stored":)" + stored) + "}";
}

const std::vector<Header> kProblemHeaders = {{"Content-Type", "application/problem+json"}};

TEST(ClientRun, NewKeyRunsHandlerAndCommitsThenReplayReturnsExactBytes) {
  ClientDatabase db;
  Client client(db.url());
  std::atomic<int> runs{0};
  const Response first = client.run(order_request(kKey), order_handler(runs, "ord_1"));
  const Response expected = created_response("ord_1");
  EXPECT_EQ(first.status, 201);
  EXPECT_EQ(first.headers, expected.headers);
  EXPECT_EQ(first.body, expected.body);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);

  const Response replay = client.run(order_request(kKey), order_handler(runs, "ord_2"));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.headers, with_replay_headers(expected.headers));
  EXPECT_EQ(replay.body, expected.body);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);
  // The same JSON document spelled differently is the same request (RFC 8785).
  const Response respelled =
      client.run(order_request(kKey, "{ \"cart\": \"c_42\", \"amount\": 1999.0 }"), order_handler(runs, "ord_3"));
  EXPECT_EQ(respelled.status, 201);
  EXPECT_EQ(runs, 1);
}

TEST(ClientRun, KeyHeldByAnOpenTransactionGives409WithRetryAfter) {
  ClientDatabase db;
  Client client(db.url());
  Connection holder(db.url());
  auto tx = holder.begin();
  // The same scope and fingerprint as the client's request, acquired and not yet committed.
  const Result held = tx->exec(
      "SELECT outcome FROM idem.acquire('acme', $1, idem.payload_hash($2::text), caller => 'checkout',"
      " resource => 'POST /v1/orders')",
      {kKey, R"({"amount":1999,"cart":"c_42"})"});
  ASSERT_EQ(held.text(0, "outcome"), "acquired");

  std::atomic<int> runs{0};
  const Response busy = client.run(order_request(kKey), order_handler(runs, "ord_1"));
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(busy.status, 409);
  EXPECT_EQ(busy.headers, (std::vector<Header>{{"Content-Type", "application/problem+json"}, {"Retry-After", "2"}}));
  EXPECT_EQ(busy.body, problem(409, "ERR_IDEMPOTENCY_IN_PROGRESS", "Request in progress",
                               "a request with this Idempotency-Key is still being processed; retry the same request "
                               "with the same key after Retry-After seconds"));
  tx->abort();
  // The holder rolled back: the key is free, the handler runs.
  EXPECT_EQ(client.run(order_request(kKey), order_handler(runs, "ord_1")).status, 201);
  EXPECT_EQ(runs, 1);
}

TEST(ClientRun, CommittedLiveLeaseGives409) {
  ClientDatabase db;
  Client client(db.url());
  Connection holder(db.url());
  holder.exec(
      "SELECT idem.acquire('acme', $1, idem.payload_hash($2::text), caller => 'checkout', resource => 'POST /v1/orders')",
      {kKey, R"({"amount":1999,"cart":"c_42"})"});
  std::atomic<int> runs{0};
  EXPECT_EQ(client.run(order_request(kKey), order_handler(runs, "ord_1")).status, 409);
  EXPECT_EQ(runs, 0);
}

TEST(ClientRun, MismatchGives422AndTheReferenceProfile409) {
  ClientDatabase db;
  std::atomic<int> runs{0};
  Client client(db.url());
  ASSERT_EQ(client.run(order_request(kKey), order_handler(runs, "ord_1")).status, 201);
  const Request other = order_request(kKey, R"({"amount":2999,"cart":"c_42"})");
  const std::string detail =
      "this Idempotency-Key was used with a different request (it differs in /amount); use a new key for a new request";
  const std::string title = "Idempotency-Key reused with a different payload";
  const auto naming = [](std::string body, const std::string& differs) { return body.insert(body.size() - 1, R"(,"differs":)" + differs); };

  const Response standard = client.run(other, order_handler(runs, "ord_2"));
  EXPECT_EQ(standard.status, 422);
  EXPECT_EQ(standard.headers, kProblemHeaders);
  EXPECT_EQ(standard.body, naming(problem(422, "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", title, detail), R"(["/amount"])"));

  ClientOptions reference_options;
  reference_options.profile = Profile::reference;
  Client reference(db.url(), reference_options);
  const Response conflict = reference.run(other, order_handler(runs, "ord_2"));
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.headers, kProblemHeaders);
  EXPECT_EQ(conflict.body, naming(problem(409, "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", title, detail), R"(["/amount"])"));

  // Opted out on the retry (nothing sent to compare) or on the first request (nothing kept): no field named.
  const std::string unnamed = "this Idempotency-Key was used with a different request; use a new key for a new request";
  Request quiet = other;
  quiet.name_differing_fields = false;
  EXPECT_EQ(client.run(quiet, order_handler(runs, "ord_2")).body, problem(422, "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", title, unnamed));
  Request first_quiet = order_request("client-run-quiet-key-01");
  first_quiet.name_differing_fields = false;
  ASSERT_EQ(client.run(first_quiet, order_handler(runs, "ord_3")).status, 201);
  EXPECT_EQ(client.run(order_request("client-run-quiet-key-01", R"({"amount":5,"cart":"c_42"})"), order_handler(runs, "ord_4")).body,
            problem(422, "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", title, unnamed));
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys WHERE payload_members IS NULL"), 1);

  // A body that became an array: the root is named, "" as a pointer.
  ASSERT_EQ(client.run(order_request("client-run-shape-key-01", R"({"0":1})"), order_handler(runs, "ord_5")).status, 201);
  const std::string root_detail =
      "this Idempotency-Key was used with a different request (it differs in the body's root); use a new key for a new request";
  EXPECT_EQ(client.run(order_request("client-run-shape-key-01", "[1]"), order_handler(runs, "ord_6")).body,
            naming(problem(422, "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", title, root_detail), R"([""])"));
  // Names PostgreSQL quotes in a text[] (a space, a comma, a quote, a backslash) come back as sent.
  ASSERT_EQ(client.run(order_request("client-run-names-key-01", R"({"first name":1,"x,y":1,"q\"\\":1,"k":1})"),
                       order_handler(runs, "ord_7")).status, 201);
  const Response names =
      client.run(order_request("client-run-names-key-01", R"({"first name":2,"x,y":2,"q\"\\":2,"k":1})"), order_handler(runs, "ord_8"));
  EXPECT_EQ(nlohmann::json::parse(names.body).at("differs"), nlohmann::json::parse(R"(["/first name","/q\"\\","/x,y"])"));
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 4);
}

TEST(ClientRun, KeyReusedOnAnotherRouteOrByAnotherCallerGives422AndRunsNothing) {
  ClientDatabase db;
  std::atomic<int> runs{0};
  Client client(db.url());
  ASSERT_EQ(client.run(order_request(kKey), order_handler(runs, "ord_1")).status, 201);
  Request other_route = order_request(kKey);
  other_route.route += "/again";
  Request other_caller = order_request(kKey);
  other_caller.caller = "another-service";
  const std::string title = "Idempotency-Key reused for another request";
  auto reused = [&](const std::string& what, const std::string& differs) {
    std::string body = problem(422, "ERR_IDEMPOTENCY_KEY_REUSED", title,
                               "this Idempotency-Key was first used with another " + what +
                                   "; nothing was executed. Use a new key for each request");
    return body.substr(0, body.size() - 1) + R"(,"differs":)" + differs + "}";
  };

  const Response by_route = client.run(other_route, order_handler(runs, "ord_2"));
  EXPECT_EQ(by_route.status, 422);
  EXPECT_EQ(by_route.headers, kProblemHeaders);
  EXPECT_EQ(by_route.body, reused("route", R"(["resource"])"));
  const Response by_caller = client.run(other_caller, order_handler(runs, "ord_2"));
  EXPECT_EQ(by_caller.body, reused("caller", R"(["caller"])"));
  // The lease API answers the same, and both refusals are on the record.
  const auto begun = client.begin(other_route);
  ASSERT_TRUE(std::holds_alternative<Response>(begun));
  EXPECT_EQ(std::get<Response>(begun).body, reused("route", R"(["resource"])"));
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.mutations WHERE outcome = 'key_reused'"), 3);

  // A route that opts into the route scope is another request: its handler runs.
  other_route.key_scope = Request::KeyScope::route;
  EXPECT_EQ(client.run(other_route, order_handler(runs, "ord_3")).status, 201);
  EXPECT_EQ(client.run(other_route, order_handler(runs, "ord_4")).status, 201);  // a replay
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 2);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys WHERE key_scope = 'route'"), 1);
  // The opt-in lasted for that request's transaction only.
  EXPECT_EQ(client.run(other_caller, order_handler(runs, "ord_5")).status, 422);
}

TEST(ClientRun, MissingKeyGives400WithoutARoundTrip) {
  ClientDatabase db;
  Client client(db.url());
  Request r = order_request(kKey);
  r.idempotency_key.reset();
  std::atomic<int> runs{0};
  const Response missing = client.run(r, order_handler(runs, "ord_1"));
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.headers, kProblemHeaders);
  EXPECT_EQ(missing.body, problem(400, "ERR_IDEMPOTENCY_KEY_MISSING", "Idempotency-Key missing",
                                  "this operation requires an Idempotency-Key header (a UUIDv4 is ideal)"));
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(client.stats().round_trips, 0u);
  EXPECT_EQ(client.stats().connections_opened, 0u);
}

TEST(ClientRun, EmptyKeyGives400Missing) {
  ClientDatabase db;
  Client client(db.url());
  std::atomic<int> runs{0};
  const Response empty = client.run(order_request(""), order_handler(runs, "ord_1"));
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(empty.body, problem(400, "ERR_IDEMPOTENCY_KEY_MISSING", "Idempotency-Key missing",
                                "an idempotency key is required"));
  EXPECT_EQ(runs, 0);
}

TEST(ClientRun, InvalidKeyGives400WithCoresMessageWithoutARoundTrip) {
  ClientDatabase db;
  Client client(db.url());
  std::atomic<int> runs{0};
  const Response short_key = client.run(order_request("too-short"), order_handler(runs, "ord_1"));
  EXPECT_EQ(short_key.status, 400);
  EXPECT_EQ(short_key.headers, kProblemHeaders);
  EXPECT_EQ(short_key.body, problem(400, "ERR_IDEMPOTENCY_KEY_INVALID", "Idempotency-Key invalid",
                                    "idempotency key is 9 characters long; it must be 16 to 255"));
  const Response newline = client.run(order_request("0123456789abcdef\n"), order_handler(runs, "ord_1"));
  EXPECT_EQ(newline.status, 400);
  EXPECT_EQ(newline.body, problem(400, "ERR_IDEMPOTENCY_KEY_INVALID", "Idempotency-Key invalid",
                                  "idempotency key has a byte outside printable ASCII (0x0A) at position 16"));
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(client.stats().round_trips, 0u);
}

// 255 characters (Stripe's limit) is the default maximum of the client and of the server alike:
// the client lets a 255-character key through and the server's idem.key_max_length accepts it.
TEST(ClientRun, KeyOf255CharactersRunsAnd256IsRefusedByDefault) {
  ClientDatabase db;
  Client client(db.url());
  std::atomic<int> runs{0};
  const Response longest = client.run(order_request(std::string(255, 'k')), order_handler(runs, "ord_1"));
  EXPECT_EQ(longest.status, 201) << longest.body;
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys WHERE length(client_key) = 255"), 1);
  const Response too_long = client.run(order_request(std::string(256, 'k')), order_handler(runs, "ord_2"));
  EXPECT_EQ(too_long.body, problem(400, "ERR_IDEMPOTENCY_KEY_INVALID", "Idempotency-Key invalid",
                                   "idempotency key is 256 characters long; it must be 16 to 255"));
  EXPECT_EQ(runs, 1);
}

TEST(ClientRun, InvalidJsonBodyGives400AnInexactNumber400AndALargeBody413) {
  ClientDatabase db;
  ClientOptions options;
  options.max_body_bytes = 64;
  Client client(db.url(), options);
  std::atomic<int> runs{0};
  const Response dup = client.run(order_request(kKey, R"({"a":1,"a":2})"), order_handler(runs, "ord_1"));
  EXPECT_EQ(dup.status, 400);
  EXPECT_EQ(dup.headers, kProblemHeaders);
  EXPECT_EQ(dup.body, problem(400, "ERR_PAYLOAD_JSON_INVALID", "Invalid JSON body",
                              R"(duplicate member name \"a\" at byte 7)"));
  const Response big = client.run(order_request(kKey, R"({"amount":9007199254740993})"), order_handler(runs, "o"));
  EXPECT_EQ(big.status, 400);
  EXPECT_EQ(big.body, problem(400, "ERR_PAYLOAD_NUMBER_PRECISION", "Number cannot be fingerprinted exactly",
                              "number 9007199254740993 at /amount cannot be represented exactly as an IEEE double"));
  const Response large = client.run(order_request(kKey, "[" + std::string(70, '1') + "]"), order_handler(runs, "o"));
  EXPECT_EQ(large.status, 413);
  EXPECT_EQ(large.body, problem(413, "ERR_PAYLOAD_TOO_LARGE", "Body too large",
                                "request body is 72 bytes; the limit is 64"));
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(client.stats().round_trips, 0u);
}

TEST(ClientRun, AllowMissingKeyRunsTheHandlerWithoutIdempotency) {
  ClientDatabase db;
  ClientOptions options;
  options.allow_missing_key = true;
  Client client(db.url(), options);
  Request r = order_request(kKey);
  r.idempotency_key.reset();
  int runs = 0;
  const auto handler = [&](Attempt& a) {
    EXPECT_FALSE(a.idempotent());
    EXPECT_THROW(a.handler_key(), InvalidArgument);
    a.exec("INSERT INTO orders VALUES ($1, 1)", {"ord_" + std::to_string(++runs)});
    return created_response("x");
  };
  EXPECT_EQ(client.run(r, handler).status, 201);
  EXPECT_EQ(client.run(r, handler).status, 201);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 2);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys"), 0);
}

TEST(ClientRun, HandlerThatThrowsRollsBackAndLeavesTheKeyFree) {
  ClientDatabase db;
  Client client(db.url());
  int runs = 0;
  const auto failing = [&](Attempt& a) -> Response {
    ++runs;
    a.exec("INSERT INTO orders VALUES ('ord_1', 1)");
    a.emit("orders.created", R"({"order":"ord_1"})", "ord_1");
    throw std::runtime_error("processor timeout");
  };
  EXPECT_THROW(
      {
        try {
          client.run(order_request(kKey), failing);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "processor timeout");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys"), 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.outbox_events"), 0);
  std::atomic<int> second{0};
  EXPECT_EQ(client.run(order_request(kKey), order_handler(second, "ord_1")).status, 201);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(second, 1);
}

TEST(ClientRun, SerializationFailureRunsTheRequestAgainAndCommitsOnce) {
  ClientDatabase db;
  Client client(db.url());
  int runs = 0;
  const auto handler = [&](Attempt& a) -> Response {
    ++runs;
    a.exec("INSERT INTO orders VALUES ('ord_1', 1)");
    // The first run meets a serialization failure after its write, as a conflicting commit would cause.
    if (runs == 1) a.exec("DO $$BEGIN RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = 'conflict'; END$$");
    return created_response("ord_1");
  };
  EXPECT_EQ(client.run(order_request(kKey), handler).status, 201);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys WHERE status = 'resolved'"), 1);
  // Always failing: three runs, then the error reaches the caller and nothing is committed.
  int always = 0;
  const auto doomed = [&](Attempt& a) -> Response {
    ++always;
    a.exec("INSERT INTO orders VALUES ('ord_2', 2)");
    a.exec("DO $$BEGIN RAISE EXCEPTION USING ERRCODE = '40P01', MESSAGE = 'deadlock'; END$$");
    return created_response("ord_2");
  };
  try {
    client.run(order_request("2b7e1516-28ae-4d2a-9f1c-aaaaaaaaaaaa"), doomed);
    FAIL() << "no exception";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.sqlstate(), "40P01");
  }
  EXPECT_EQ(always, 3);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders WHERE id = 'ord_2'"), 0);
}

TEST(ClientRun, ServerErrorInTheHandlerIsItsExceptionClassAndRollsBack) {
  ClientDatabase db;
  Client client(db.url());
  const auto handler = [&](Attempt& a) -> Response {
    a.exec("INSERT INTO orders VALUES ('ord_1', 1)");
    a.exec("SELECT idem.check_transition('order', 'shipped', 'refunded')");
    return created_response("ord_1");
  };
  try {
    client.run(order_request(kKey), handler);
    FAIL() << "no exception";
  } catch (const InvalidTransition& e) {
    EXPECT_EQ(e.name(), "ERR_INVALID_TRANSITION");
    EXPECT_EQ(e.sqlstate(), "IK006");
    EXPECT_EQ(e.detail().rfind("order cannot move from shipped to refunded", 0), 0u) << e.detail();
    EXPECT_EQ(std::string(e.what()).rfind("ERR_INVALID_TRANSITION: order cannot move", 0), 0u) << e.what();
  }
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys"), 0);
}

// A class 08 error the server itself sends over a connection that is fine (Citus's coordinator
// so reports a worker it cannot reach) fails the statement: DatabaseError SQLSTATE_08006, not a
// lost connection. Nothing is committed and the pooled connection is kept for the next request.
TEST(ClientRun, ServerSentConnectionErrorFailsTheStatementAndKeepsTheConnection) {
  ClientDatabase db;
  ClientOptions options;
  options.pool_size = 1;
  Client client(db.url(), options);
  const auto handler = [&](Attempt& a) -> Response {
    a.exec("INSERT INTO orders VALUES ('ord_1', 1)");
    a.exec("DO $$BEGIN RAISE EXCEPTION USING ERRCODE = '08006', MESSAGE = 'connection to the remote node w2:5432 failed'; END$$");
    return created_response("ord_1");
  };
  try {
    client.run(order_request(kKey), handler);
    FAIL() << "no exception";
  } catch (const ConnectionLost& e) {
    FAIL() << "taken for a lost connection: " << e.what();
  } catch (const DatabaseError& e) {
    EXPECT_EQ(e.name(), "SQLSTATE_08006");
    EXPECT_EQ(e.sqlstate(), "08006");
    EXPECT_EQ(e.detail(), "connection to the remote node w2:5432 failed");
  }
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys"), 0);
  std::atomic<int> runs{0};
  EXPECT_EQ(client.run(order_request(kKey), order_handler(runs, "ord_1")).status, 201);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(client.stats().connections_opened, 1u);
  EXPECT_EQ(client.stats().connections_discarded, 0u);
}

TEST(ClientRun, CompleteAfterTheLeaseWasGivenUpThrowsLeaseLost) {
  ClientDatabase db;
  Client client(db.url());
  const auto handler = [&](Attempt& a) -> Response {
    a.exec("SELECT idem.release($1, $2::bigint, 'given up')", {a.handle(), std::to_string(a.fencing_token())});
    return created_response("ord_1");
  };
  EXPECT_THROW(client.run(order_request(kKey), handler), LeaseLost);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys"), 0);
}

TEST(ClientRun, ExpiredLeaseWithACheckpointIsResumedAtItsRecoveryPoint) {
  ClientDatabase db;
  Client client(db.url());
  Connection crashed(db.url());
  const Result first = crashed.exec(
      "SELECT handle, attempt FROM idem.acquire('acme', $1, idem.payload_hash($2::text), caller => 'checkout',"
      " resource => 'POST /v1/orders', lease => '200 milliseconds')",
      {kKey, R"({"amount":1999,"cart":"c_42"})"});
  crashed.exec("SELECT idem.checkpoint($1, $2::bigint, 'charge_created', '{\"charge_id\":\"ch_1\"}')",
               {first.text(0, "handle"), first.text(0, "attempt")});
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  bool resumed = false;
  std::optional<std::string> point, data;
  const Response r = client.run(order_request(kKey), [&](Attempt& a) {
    resumed = a.resumed();
    point = a.recovery_point();
    data = a.recovery_data();
    EXPECT_NE(std::to_string(a.fencing_token()), first.text(0, "attempt"));
    return created_response("ord_1");
  });
  EXPECT_EQ(r.status, 201);
  EXPECT_TRUE(resumed);
  EXPECT_EQ(point, "charge_created");
  EXPECT_EQ(data, R"({"charge_id": "ch_1"})");
  std::atomic<int> later{0};
  EXPECT_EQ(client.run(order_request(kKey), order_handler(later, "x")).headers.back(),
            (Header{"Idempotent-Replayed", "true"}));
  EXPECT_EQ(later, 0);
}

TEST(ClientRun, EmitIsCommittedWithTheHandlersWrites) {
  ClientDatabase db;
  Client client(db.url());
  std::int64_t event = 0;
  client.run(order_request(kKey), [&](Attempt& a) {
    a.exec("INSERT INTO orders VALUES ('ord_1', 1)");
    event = a.emit("orders.created", R"({"order":"ord_1"})", "ord_1");
    return created_response("ord_1");
  });
  EXPECT_GT(event, 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.outbox_events WHERE event_id = " + std::to_string(event) +
                     " AND key = 'ord_1' AND tenant_id = 'acme'"),
            1);
}

TEST(ClientRun, HandlerKeyIsTheServersAndStableAcrossAttempts) {
  ClientDatabase db;
  Client client(db.url());
  std::string first_key;
  EXPECT_THROW(client.run(order_request(kKey),
                          [&](Attempt& a) -> Response {
                            first_key = a.handler_key();
                            EXPECT_EQ(a.exec("SELECT idem.handler_key($1)", {a.handle()}).at(0).at(0), first_key);
                            throw std::runtime_error("transient");
                          }),
               std::runtime_error);
  std::string second_key;
  client.run(order_request(kKey), [&](Attempt& a) {
    second_key = a.handler_key();
    return created_response("ord_1");
  });
  EXPECT_EQ(first_key.rfind("idem_", 0), 0u);
  EXPECT_EQ(first_key.size(), 45u);
  EXPECT_EQ(first_key, second_key);
}

TEST(ClientRun, InvalidHeaderNameThrowsAndCommitsNothing) {
  ClientDatabase db;
  Client client(db.url());
  EXPECT_THROW(client.run(order_request(kKey),
                          [&](Attempt& a) {
                            a.exec("INSERT INTO orders VALUES ('ord_1', 1)");
                            Response r;
                            r.headers = {{"Bad Name", "x"}};
                            return r;
                          }),
               InvalidArgument);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 0);
}

// Round trips, counted by the client (one per exchange it waits for): a new key costs what the
// business transaction alone costs (BEGIN rides with acquire, complete with COMMIT); a replay is
// one round trip (its COMMIT, which keeps the replay's audit row, is sent without waiting).
TEST(ClientRun, RoundTripsPerPath) {
  ClientDatabase db;
  ClientOptions options;
  options.allow_missing_key = true;
  Client client(db.url(), options);
  std::atomic<int> runs{0};
  auto rt = [&] { return client.stats().round_trips; };

  Request unguarded = order_request(kKey);
  unguarded.idempotency_key.reset();
  auto before = rt();
  client.run(unguarded, order_handler(runs, "ord_0"));
  EXPECT_EQ(rt() - before, 3u) << "business alone: BEGIN, INSERT, COMMIT";

  before = rt();
  client.run(order_request(kKey), order_handler(runs, "ord_1"));
  EXPECT_EQ(rt() - before, 3u) << "new key: BEGIN+acquire, INSERT, complete+COMMIT";
  EXPECT_EQ(client.stats().deferred_commits, 0u);

  before = rt();
  const Response replay = client.run(order_request(kKey), order_handler(runs, "ord_2"));
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(rt() - before, 1u) << "replay: BEGIN+acquire (COMMIT not waited for)";
  EXPECT_EQ(client.stats().deferred_commits, 1u);
  EXPECT_EQ(runs, 2);

  before = rt();
  client.run(order_request("short"), order_handler(runs, "ord_3"));
  EXPECT_EQ(rt() - before, 0u) << "invalid key: none";
  EXPECT_EQ(client.stats().connections_opened, 1u);

  // The deferred COMMIT's answer is read on the connection's next use; the replay's audit row
  // is committed and the connection is clean for what follows.
  client.run(unguarded, order_handler(runs, "ord_4"));
  EXPECT_EQ(client.stats().deferred_commit_failures, 0u);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.mutations WHERE outcome = 'replay'"), 1);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 3);
}

TEST(ClientErrors, ProblemResponsesFollowDocsErrorsMd) {
  const Response lost = problem_response(LeaseLost("ERR_LEASE_LOST", "IK005", "cannot complete key t:ab: lost"));
  EXPECT_EQ(lost.status, 503);
  EXPECT_EQ(lost.headers, (std::vector<Header>{{"Content-Type", "application/problem+json"}, {"Retry-After", "2"}}));
  // The server's message (key digest, attempt numbers) stays in what(), for the log.
  EXPECT_EQ(lost.body, problem(503, "ERR_LEASE_LOST", "Lease lost",
                               "this attempt lost its hold on the Idempotency-Key before recording its result (it took "
                               "longer than its lease and another attempt took the key over, or the key was resolved "
                               "meanwhile); retry the same request with the same Idempotency-Key after Retry-After "
                               "seconds: it gets the recorded answer, or 409 while the other attempt still runs"));
  EXPECT_EQ(lost.body.find("t:ab"), std::string::npos);
  const Response unknown = problem_response(OutcomeUnknown("server closed the connection"));
  EXPECT_EQ(unknown.status, 503);
  EXPECT_EQ(unknown.body, problem(503, "ERR_CLIENT_OUTCOME_UNKNOWN", "Outcome unknown",
                                  "outcome unknown — retry with the same key", ""));  // it may have been stored
  EXPECT_EQ(std::string(OutcomeUnknown("x").what()), "ERR_CLIENT_OUTCOME_UNKNOWN: outcome unknown — retry with the same key");
  const Response misconfigured = problem_response(InvalidArgument(
      "ERR_ARGUMENT_INVALID", "IK012", "server misconfiguration: idem.key_min_length (64) exceeds idem.key_max_length (32)"));
  EXPECT_EQ(misconfigured.status, 500);
  const Response other = problem_response(DatabaseError("SQLSTATE_42501", "42501", "permission denied for table x"));
  EXPECT_EQ(other.status, 500);
  EXPECT_EQ(other.body, problem(500, "SQLSTATE_42501", "Internal error", "the request could not be completed"));
}

TEST(ClientErrors, SqlstatesMapToTheirClasses) {
  auto thrown = [](const char* state) -> std::string {
    try {
      throw_for_sqlstate(state, std::string("ERR_X: m"));
    } catch (const KeyMissing&) {
      return "KeyMissing";
    } catch (const KeyInvalid&) {
      return "KeyInvalid";
    } catch (const InProgress&) {
      return "InProgress";
    } catch (const PayloadMismatch&) {
      return "PayloadMismatch";
    } catch (const LeaseLost&) {
      return "LeaseLost";
    } catch (const InvalidTransition&) {
      return "InvalidTransition";
    } catch (const NonAtomicStore&) {
      return "NonAtomicStore";
    } catch (const InvalidPayload&) {
      return "InvalidPayload";
    } catch (const InvalidArgument&) {
      return "InvalidArgument";
    } catch (const TenantForbidden&) {
      return "TenantForbidden";
    } catch (const DatabaseError& e) {
      return "DatabaseError:" + e.name();
    }
    return "";
  };
  EXPECT_EQ(thrown("IK001"), "KeyMissing");
  EXPECT_EQ(thrown("IK002"), "KeyInvalid");
  EXPECT_EQ(thrown("IK003"), "InProgress");
  EXPECT_EQ(thrown("IK004"), "PayloadMismatch");
  EXPECT_EQ(thrown("IK005"), "LeaseLost");
  EXPECT_EQ(thrown("IK006"), "InvalidTransition");
  EXPECT_EQ(thrown("IK007"), "NonAtomicStore");
  EXPECT_EQ(thrown("IK009"), "InvalidPayload");
  EXPECT_EQ(thrown("IK010"), "InvalidPayload");
  EXPECT_EQ(thrown("IK013"), "InvalidPayload");
  EXPECT_EQ(thrown("IK011"), "InvalidArgument");
  EXPECT_EQ(thrown("IK012"), "InvalidArgument");
  EXPECT_EQ(thrown("IK019"), "DatabaseError:ERR_OUTBOX_TOPIC_UNKNOWN");
  EXPECT_EQ(thrown("IK024"), "TenantForbidden");
  EXPECT_EQ(problem_response(TenantForbidden("ERR_TENANT_FORBIDDEN", "IK024", "role svc is bound to tenants acme, not 'x'")).status, 403);
  // A consumer bound to other consumers: its configuration, no HTTP answer; named from the table.
  EXPECT_EQ(thrown("IK025"), "DatabaseError:ERR_CONSUMER_FORBIDDEN");
  EXPECT_EQ(thrown("40001"), "DatabaseError:SQLSTATE_40001");
}

}  // namespace
}  // namespace idem::it

namespace idem::it {
namespace {

// The server's count of the same round trips (pg_stat_statements is preloaded on the test
// cluster): every statement the client sends is one call, BEGIN and COMMIT included.
TEST(ClientRun, RoundTripsSeenByPgStatStatements) {
  ClientDatabase db;
  Connection admin(db.url());
  admin.exec("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  Client client(db.url());
  std::atomic<int> runs{0};
  client.run(order_request("warm-up-key-000000001"), order_handler(runs, "ord_0"));  // connect + prepare
  const std::string reset =
      "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)";
  const std::string calls =
      "SELECT coalesce(sum(calls), 0)::text AS count FROM pg_stat_statements"
      " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
      " AND query NOT LIKE '%pg_stat_statements%'";
  admin.exec(reset);
  client.run(order_request(kKey), order_handler(runs, "ord_1"));
  EXPECT_EQ(admin.exec(calls).text(0, "count"), "5") << "new key: BEGIN, acquire, INSERT, complete, COMMIT (in 3 messages)";
  admin.exec(reset);
  client.run(order_request(kKey), order_handler(runs, "ord_2"));
  // The replay's COMMIT was sent without waiting: give the server a moment to count it.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (admin.exec(calls).text(0, "count") != "3" && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(admin.exec(calls).text(0, "count"), "3") << "replay: BEGIN, acquire, COMMIT";
  EXPECT_EQ(runs, 2);
}

}  // namespace
}  // namespace idem::it
