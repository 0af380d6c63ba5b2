// problem_response: RFC 9457 bodies, the "stored" member, and no internals in HTTP bodies.
#include <gtest/gtest.h>

#include <string>

#include "idem/client.hpp"
#include "idem/key_header.hpp"

namespace idem {
namespace {

const std::string kPrefix = R"({"type":"urn:pg-idempotency:error:ERR_X","title":"T","status":400,"detail":"d","code":"ERR_X")";

TEST(ProblemResponse, StoredMemberComesLastAndOnlyWhenSaid) {
  EXPECT_EQ(problem_response(400, "ERR_X", "T", "d").body, kPrefix + "}");
  EXPECT_EQ(problem_response(400, "ERR_X", "T", "d", Stored::unsaid).body, kPrefix + "}");
  EXPECT_EQ(problem_response(400, "ERR_X", "T", "d", Stored::no).body, kPrefix + R"(,"stored":false})");
  EXPECT_EQ(problem_response(400, "ERR_X", "T", "d", Stored::yes).body, kPrefix + R"(,"stored":true})");
  EXPECT_EQ(problem_response(400, "ERR_X", "T", "d", Stored::yes, "https://docs.example/errors#").body,
            R"({"type":"https://docs.example/errors#ERR_X","title":"T","status":400,"detail":"d","code":"ERR_X","stored":true})");
}

// A ClientError means nothing was recorded: every 400 the client answers by itself says so.
TEST(ProblemResponse, ClientErrorsAreNotStored) {
  for (const Response& r : {problem_response(KeyMissing("ERR_IDEMPOTENCY_KEY_MISSING", "IK001", "x")),
                            problem_response(KeyInvalid("ERR_IDEMPOTENCY_KEY_INVALID", "IK002", "x")),
                            problem_response(InvalidPayload("ERR_PAYLOAD_JSON_INVALID", "IK010", "x")),
                            problem_response(InvalidPayload("ERR_PAYLOAD_TOO_LARGE", "IK013", "x")),
                            problem_response(InProgress("ERR_IDEMPOTENCY_IN_PROGRESS", "IK003", "x")),
                            problem_response(LeaseLost("ERR_LEASE_LOST", "IK005", "x")),
                            problem_response(DatabaseError("SQLSTATE_42501", "42501", "x")),
                            key_header_problem(parse_key_header(R"("a", "b")"))}) {
    EXPECT_NE(r.body.find(R"(,"stored":false})"), std::string::npos) << r.body;
  }
  // The COMMIT's fate is unknown: it may have been recorded, so the body does not say.
  const Response unknown = problem_response(OutcomeUnknown("server closed the connection"));
  EXPECT_EQ(unknown.body.find("\"stored\""), std::string::npos) << unknown.body;
}

TEST(ProblemResponse, LeaseLostKeepsTheServersMessageOutOfTheBody) {
  const LeaseLost e("ERR_LEASE_LOST", "IK005",
                    "cannot complete key acme:de129629f6a5afff95386f84ef554c5a5e3a7fa18fbd838da353b3507c0caefc with attempt "
                    "41: the record is in_progress at attempt 42");
  const Response r = problem_response(e);
  EXPECT_EQ(r.status, 503);
  ASSERT_NE(r.header("Retry-After"), nullptr);
  for (const char* internal : {"de129629", "acme", "attempt 41", "attempt 42", "in_progress"}) {
    EXPECT_EQ(r.body.find(internal), std::string::npos) << internal << " in " << r.body;
  }
  EXPECT_NE(r.body.find("retry the same request with the same Idempotency-Key"), std::string::npos) << r.body;
  // The service's log keeps them.
  EXPECT_NE(std::string(e.what()).find("de129629"), std::string::npos);
}

TEST(ProblemResponse, ConnectionErrorsKeepTheDatabasesAddressOutOfTheBody) {
  const Response lost = problem_response(ConnectionLost(
      "ERR_CLIENT_CONNECTION_LOST", "08006",
      "cannot connect: connection to server at \"10.0.0.7\", port 5432 failed: Connection refused"));
  EXPECT_EQ(lost.status, 503);
  EXPECT_EQ(lost.body.find("10.0.0.7"), std::string::npos) << lost.body;
  EXPECT_EQ(lost.body.find("5432"), std::string::npos) << lost.body;
  EXPECT_NE(lost.body.find("retry the same request with the same Idempotency-Key"), std::string::npos) << lost.body;
  const Response busy = problem_response(PoolTimeout("ERR_CLIENT_POOL_TIMEOUT", "",
                                                     "no database connection free within 5000 ms (pool_size 4)"));
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.body.find("pool_size"), std::string::npos) << busy.body;
}

// On Citus the coordinator reports a worker it cannot reach with SQLSTATE 08006 over a healthy
// connection: unavailable and worth a retry, and the worker's address stays out of the body.
TEST(ProblemResponse, AnUnreachableNodeIsUnavailableWithoutItsAddress) {
  const Response r = problem_response(DatabaseError(
      "SQLSTATE_08006", "08006",
      "connection to the remote node postgres@10.0.0.9:6432 failed with the following error: Connection refused"));
  EXPECT_EQ(r.status, 503);
  ASSERT_NE(r.header("Retry-After"), nullptr);
  for (const char* internal : {"10.0.0.9", "6432", "postgres@", "remote node"}) {
    EXPECT_EQ(r.body.find(internal), std::string::npos) << internal << " in " << r.body;
  }
  EXPECT_NE(r.body.find(R"("code":"SQLSTATE_08006")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("retry the same request with the same Idempotency-Key"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"(,"stored":false})"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace idem
