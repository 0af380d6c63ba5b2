// What a client sees through real connections: a lease committed in one transaction and completed
// in another, takeover after lease expiry with fencing, and the same fingerprint in both places.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/fingerprint.hpp"
#include "core/hash/sha256.hpp"
#include "tests/integration/pq.hpp"

namespace idem::it {
namespace {

const std::string kAcquire =
    "SELECT outcome, handle, attempt, generation, recovery_point, recovery_data::text AS recovery_data,"
    " response_status, response_headers::text AS response_headers, response_body, order_id, retry_after"
    " FROM idem.acquire($1, $2, $3::jsonb)";
const std::string kAcquireShortLease =
    "SELECT outcome, handle, attempt FROM idem.acquire($1, $2, $3::jsonb, lease => '200 milliseconds')";
const std::string kComplete = "SELECT idem.complete($1, $2::int, $3::int, $4::jsonb, $5::bytea, $6)";

// One statement in its own READ COMMITTED transaction, committed.
Result run(Connection& conn, const std::string& sql, const Params& params) {
  auto tx = conn.begin();
  Result r = tx->exec(sql, params);
  tx->commit();
  return r;
}

// A body with bytes text columns would mangle: NUL, high bytes, a backslash, CR/LF.
std::string binary_body(const std::string& prefix) {
  std::string body = prefix;
  body += std::string("\0\x01\xff\xfe\\x00\r\n", 10);
  body += '\0';
  return body;
}

TEST(ClientOutcomes, LeaseCommittedThenCompletedInNewTransactionReplaysExactBytes) {
  ScratchDatabase db;
  Connection holder(db.url());
  Connection other(db.url());
  const Params key = {"acme", "multi-tx-key-000001", R"({"amount": 42, "currency": "EUR"})"};

  const Result first = run(holder, kAcquire, key);
  ASSERT_EQ(first.text(0, "outcome"), "acquired");
  const std::string handle = first.text(0, "handle");
  const int attempt = first.integer(0, "attempt");
  EXPECT_EQ(attempt, 1);

  // The lease is committed: another connection sees the key busy, with a Retry-After.
  const Result busy = run(other, kAcquire, key);
  EXPECT_EQ(busy.text(0, "outcome"), "in_progress");
  EXPECT_FALSE(busy.is_null(0, "retry_after"));
  EXPECT_TRUE(busy.is_null(0, "response_body"));

  const std::string body = binary_body("order 77 created");
  run(holder, kComplete,
      {handle, std::to_string(attempt), "201", R"({"Location": "/orders/77", "X-Trace": "a\"b\u00e9"})",
       bytea_param(body), "ord_77"});

  const Result replay = run(other, kAcquire, key);
  ASSERT_EQ(replay.text(0, "outcome"), "replay");
  EXPECT_EQ(replay.integer(0, "response_status"), 201);
  EXPECT_EQ(replay.bytes(0, "response_body"), body);
  EXPECT_EQ(replay.text(0, "order_id"), "ord_77");
  EXPECT_EQ(replay.text(0, "response_headers"), R"({"X-Trace": "a\"bé", "Location": "/orders/77"})");

  // The holder asking again gets the same replay, not a second lease.
  EXPECT_EQ(run(holder, kAcquire, key).text(0, "outcome"), "replay");
}

TEST(ClientOutcomes, TakeoverAfterLeaseExpiryResumesAtCheckpointAndFencesStaleHolder) {
  ScratchDatabase db;
  Connection stale(db.url());
  Connection taker(db.url());
  const Params key = {"acme", "takeover-key-000001", R"({"amount": 7})"};

  const Result first = run(stale, kAcquireShortLease, key);
  ASSERT_EQ(first.text(0, "outcome"), "acquired");
  ASSERT_EQ(first.integer(0, "attempt"), 1);
  const std::string handle = first.text(0, "handle");
  run(stale, "SELECT idem.checkpoint($1, 1, 'charge_created', $2::jsonb)",
      {handle, R"({"charge_id": "ch_42", "amount": 7})"});

  EXPECT_EQ(run(taker, kAcquire, key).text(0, "outcome"), "in_progress");  // lease still live
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  const Result resumed = run(taker, kAcquire, key);
  ASSERT_EQ(resumed.text(0, "outcome"), "resumed");
  EXPECT_EQ(resumed.integer(0, "attempt"), 2);
  // The same record; the taker's handle carries its own lease's secret.
  const std::string taker_handle = resumed.text(0, "handle");
  EXPECT_EQ(taker_handle.substr(0, taker_handle.size() - 33), handle.substr(0, handle.size() - 33));
  EXPECT_NE(taker_handle, handle);
  EXPECT_EQ(resumed.text(0, "recovery_point"), "charge_created");
  EXPECT_EQ(resumed.text(0, "recovery_data"), R"({"amount": 7, "charge_id": "ch_42"})");

  const std::string kRow = "SELECT k::text AS row FROM idem.keys k";
  const std::string before = run(taker, kRow, {}).text(0, "row");

  // The stale holder's result is refused with ERR_LEASE_LOST and changes nothing.
  auto tx = stale.begin();
  try {
    tx->exec(kComplete, {handle, "1", "201", "{}", bytea_param("stale"), "ord_stale"});
    FAIL() << "complete with a taken-over attempt succeeded";
  } catch (const DbError& e) {
    EXPECT_EQ(e.sqlstate(), "IK005") << e.what();
    EXPECT_NE(std::string(e.what()).find("ERR_LEASE_LOST"), std::string::npos) << e.what();
  }
  tx->abort();
  tx.reset();
  const Result after = run(taker, "SELECT k::text AS row, status, attempt FROM idem.keys k", {});
  EXPECT_EQ(after.text(0, "row"), before);
  EXPECT_EQ(after.text(0, "status"), "in_progress");
  EXPECT_EQ(after.integer(0, "attempt"), 2);

  // The taker, holding the fencing token, can still finish.
  run(taker, kComplete, {taker_handle, "2", "201", "{}", bytea_param("resumed"), "ord_7"});
  const Result replay = run(stale, kAcquire, key);
  ASSERT_EQ(replay.text(0, "outcome"), "replay");
  EXPECT_EQ(replay.bytes(0, "response_body"), "resumed");
}

TEST(ClientOutcomes, PayloadHashInDatabaseEqualsCoreFingerprint) {
  ScratchDatabase db;
  Connection conn(db.url());
  const std::vector<std::string> documents = {
      "{}",
      "null",
      R"({"b": 2, "a": 1})",
      R"({"amount": 1.50, "currency": "EUR", "items": [3, 2, 1e2, -0.0]})",
      R"({"name": "Zoë \u00e9\ud83d\ude00", "nested": {"z": [true, false, null], "é": "x", "\u0001": ""}})",
      R"([1, "two", {"three": 3.0}, [], {}])",
      R"({"big": 9007199254740991, "small": 5e-324, "exp": 1E+21})",
  };
  int i = 0;
  for (const auto& doc : documents) {
    SCOPED_TRACE(doc);
    const std::string core_hex = hash::to_hex(fingerprint_text(doc).hash);
    const Result r = run(conn,
                         "SELECT encode(idem.payload_hash($1::text), 'hex') AS from_text,"
                         " encode(idem.payload_hash($1::jsonb), 'hex') AS from_jsonb",
                         {doc});
    EXPECT_EQ(r.text(0, "from_text"), core_hex);
    EXPECT_EQ(r.text(0, "from_jsonb"), core_hex);

    // The hash acquire stores is the same 32 bytes, so a service may send it precomputed.
    const std::string key = "fingerprint-key-" + std::to_string(1000000 + i++);
    run(conn, "SELECT idem.acquire('acme', $1, $2::jsonb)", {key, doc});
    const Result stored = run(
        conn, "SELECT encode(payload_hash, 'hex') AS h, hash_scheme FROM idem.keys WHERE client_key = $1", {key});
    EXPECT_EQ(stored.text(0, "h"), core_hex);
    EXPECT_EQ(stored.integer(0, "hash_scheme"), kFingerprintScheme);
    std::string raw(reinterpret_cast<const char*>(fingerprint_text(doc).hash.data()), 32);
    const Result same = run(conn, "SELECT outcome FROM idem.acquire('acme', $1, $2::bytea)", {key, bytea_param(raw)});
    EXPECT_EQ(same.text(0, "outcome"), "in_progress");  // same payload: not a mismatch
  }
}

}  // namespace
}  // namespace idem::it
