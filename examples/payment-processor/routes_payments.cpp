// /v1/charges, /v1/refunds and /health; see routes.hpp.
#include <thread>
#include <variant>

#include "charges.hpp"
#include "idempotency.hpp"
#include "refunds.hpp"
#include "requests.hpp"
#include "routes.hpp"
#include "statements.hpp"

namespace processor {
namespace {

// A validated request turned into its execution, or the 400 saying why it is not valid.
using Plan = std::variant<Execution, ApiResponse>;
using Planner = std::function<Plan(const nlohmann::json& body, const std::string& key)>;

ListQuery list_query(const httplib::Request& req) {
  return {query_param(req, "idempotency_key"), query_param(req, "created_gte"), query_param(req, "starting_after"),
          query_param(req, "limit")};
}

ApiResponse processor_unavailable() {
  return api_error(503, "api_error", "processor_unavailable",
                   "The processor is temporarily unavailable; retry with the same Idempotency-Key");
}

// The order matters: a request without a key or with a malformed body is refused before it can
// consume an armed fault or be stored; a transient fault answers before anything is locked.
void serve_payment_post(Context& context, const std::string& endpoint, const Planner& plan,
                        const httplib::Request& req, httplib::Response& res) {
  const std::string key = req.get_header_value("Idempotency-Key");
  if (auto bad = check_idempotency_key(key)) return reply(res, *bad);
  res.set_header("Idempotency-Key", key);

  const auto body = parse_body(req.body);
  if (const auto* bad = std::get_if<ApiResponse>(&body)) return reply(res, *bad);
  const auto& json = std::get<nlohmann::json>(body);
  const Plan planned = plan(json, key);
  if (const auto* bad = std::get_if<ApiResponse>(&planned)) return reply(res, *bad);

  const Fault fault = context.faults.take();
  if (fault.mode == FaultMode::transient) {
    res.set_header("Retry-After", "1");
    return reply(res, processor_unavailable());
  }
  const auto hold = fault.mode == FaultMode::slow ? fault.delay : std::chrono::milliseconds(0);
  const KeyedAnswer answer = execute_once(context.pool, {key, endpoint, request_fingerprint(endpoint, json)}, hold,
                                          std::get<Execution>(planned));
  // The answer is committed: a caller whose read timeout fires now did get charged.
  if (fault.mode == FaultMode::timeout) std::this_thread::sleep_for(fault.delay);
  if (answer.replayed) res.set_header("Idempotent-Replayed", "true");
  reply(res, answer.response);
}

Plan plan_charge(Context& context, const nlohmann::json& body, const std::string& key) {
  auto parsed = parse_charge_request(body);
  if (auto* bad = std::get_if<ApiResponse>(&parsed)) return *bad;
  return Execution([request = std::get<ChargeRequest>(parsed), key, base_url = context.base_url](pqxx::work& tx) {
    return create_charge(tx, request, key, base_url);
  });
}

Plan plan_refund(const nlohmann::json& body, const std::string& key) {
  auto parsed = parse_refund_request(body);
  if (auto* bad = std::get_if<ApiResponse>(&parsed)) return *bad;
  return Execution([request = std::get<RefundRequest>(parsed), key](pqxx::work& tx) {
    return create_refund(tx, request, key);
  });
}

// GET-style routes: one read (or the authorize update) in its own transaction.
template <class Read>
httplib::Server::Handler transactional(Context& context, Read read) {
  return guarded([&context, read](const httplib::Request& req, httplib::Response& res) {
    reply(res, in_transaction(context.pool, [&](pqxx::work& tx) { return read(req, tx); }));
  });
}

}  // namespace

void add_payment_routes(httplib::Server& server, Context& context) {
  const Planner charge = [&context](const nlohmann::json& body, const std::string& key) {
    return plan_charge(context, body, key);
  };
  server.Post("/v1/charges", guarded([&context, charge](const httplib::Request& req, httplib::Response& res) {
                serve_payment_post(context, "POST /v1/charges", charge, req, res);
              }));
  server.Post("/v1/refunds", guarded([&context](const httplib::Request& req, httplib::Response& res) {
                serve_payment_post(context, "POST /v1/refunds", plan_refund, req, res);
              }));

  server.Get("/v1/charges", transactional(context, [&context](const httplib::Request& req, pqxx::work& tx) {
               return list_charges(tx, list_query(req), context.base_url);
             }));
  server.Get(R"(/v1/charges/([^/]+))", transactional(context, [&context](const httplib::Request& req, pqxx::work& tx) {
               return find_charge(tx, req.matches[1], context.base_url);
             }));
  server.Post(R"(/v1/charges/([^/]+)/authorize)",
              transactional(context, [&context](const httplib::Request& req, pqxx::work& tx) {
                return authorize_charge(tx, req.matches[1], context.base_url);
              }));
  server.Get("/v1/refunds", transactional(context, [](const httplib::Request& req, pqxx::work& tx) {
               return list_refunds(tx, list_query(req), query_param(req, "charge"));
             }));
  server.Get(R"(/v1/refunds/([^/]+))", transactional(context, [](const httplib::Request& req, pqxx::work& tx) {
               return find_refund(tx, req.matches[1]);
             }));

  // Healthy means the database answers too: a caller waiting for this can start charging.
  server.Get("/health", transactional(context, [](const httplib::Request&, pqxx::work& tx) {
               tx.exec_prepared(stmt::kHealth);
               return json_response(200, Json{{"status", "ok"}});
             }));
}

}  // namespace processor
