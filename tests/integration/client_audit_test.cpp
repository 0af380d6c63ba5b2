// The audit fields the client passes through: the request's mutation type, the completion's order
// id, processor response, local status and whether the processor was called — what
// idem.mutations records and idem.double_charges reads.
#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/client_support.hpp"

namespace idem::it {
namespace {

const std::string kKey = "audit-key-000000000000001";

std::string one(const ClientDatabase& db, const std::string& sql) {
  Connection c(db.url());
  return c.exec(sql).text(0, "v");
}

TEST(ClientAudit, RunRecordsTheMutationTypeAndTheCompletionsAuditFields) {
  ClientDatabase db;
  Client client(db.url());
  Request request = order_request(kKey);
  request.mutation_type = "capture";
  const Response r = client.run(request, [](Attempt& a) {
    a.exec("INSERT INTO orders VALUES ('ord_1', 1999)");
    a.record({"ord_1", R"({"charge_id":"ch_1"})", "paid", true});
    return created_response("ord_1");
  });
  ASSERT_EQ(r.status, 201);
  EXPECT_EQ(one(db,
                "SELECT string_agg(concat_ws('|', mutation_type, outcome, handler_called, order_id,"
                " handler_response->>'charge_id', local_status), ',' ORDER BY mutation_id) AS v FROM idem.mutations"),
            "capture|completed|t|ord_1|ch_1|paid");
  EXPECT_EQ(one(db, "SELECT concat_ws('|', order_id, handler_response::text, local_status) AS v FROM idem.keys"),
            R"(ord_1|{"charge_id": "ch_1"}|paid)");
}

TEST(ClientAudit, AnUnknownMutationTypeIsTheServicesBugAndRecordsNothing) {
  ClientDatabase db;
  Client client(db.url());
  Request request = order_request(kKey);
  request.mutation_type = "transfer";
  std::atomic<int> runs{0};
  try {
    client.run(request, order_handler(runs, "ord_1"));
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.name(), "ERR_ARGUMENT_INVALID");
    EXPECT_EQ(e.detail(), "mutation_type must be create, capture, refund or void, not 'transfer'");
  }
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.keys"), 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM idem.mutations"), 0);
}

// A lease: the step before the processor call is not an execution; the resume after a crash that
// verified the charge records the same charge id: no double charge. A resume that charged again
// under another processor key (a processor that lost its key) is the one row double_charges lists.
TEST(ClientAudit, LeaseCheckpointsAndCompletionFeedDoubleCharges) {
  ClientDatabase db;
  ClientOptions options;
  options.lease = std::chrono::milliseconds(300);
  Client client(db.url(), options);
  const auto lease_of = [&](const std::string& key) {
    auto begun = client.begin(order_request(key));
    if (std::holds_alternative<Response>(begun)) throw std::runtime_error("begin refused");
    return std::move(std::get<Lease>(begun));
  };

  Lease honest = lease_of("audit-honest-00000000001");
  honest.checkpoint("charging", std::nullopt, /*handler_called=*/false);
  honest.checkpoint("charged", R"({"charge_id":"ch_A"})");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // crashed before complete
  Lease verified = lease_of("audit-honest-00000000001");
  ASSERT_TRUE(verified.resumed());
  verified.complete(created_response("ord_A"), {"ord_A", R"({"charge_id":"ch_A"})", "paid", true});

  Lease twice = lease_of("audit-twice-000000000001");
  twice.checkpoint("charged", R"({"charge_id":"ch_B"})");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  Lease again = lease_of("audit-twice-000000000001");
  ASSERT_TRUE(again.resumed());
  again.complete(created_response("ord_B"), {"ord_B", R"({"charge_id":"ch_C"})", "paid", true});

  EXPECT_EQ(one(db,
                "SELECT string_agg(concat_ws('|', client_key, executions, array_to_string(charge_ids, ';')), ',')"
                " AS v FROM idem.double_charges()"),
            "audit-twice-000000000001|2|ch_B;ch_C");
  EXPECT_EQ(one(db,
                "SELECT string_agg(concat_ws('|', outcome, handler_called), ',' ORDER BY mutation_id) AS v"
                " FROM idem.mutations WHERE client_key = 'audit-honest-00000000001'"),
            // The crashed attempt goes on the record when the next one takes over (its last
            // checkpoint said the handler ran).
            "checkpoint|f,checkpoint|t,abandoned|t,completed|t");
}

}  // namespace
}  // namespace idem::it
