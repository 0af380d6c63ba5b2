// Charges; see charges.hpp.
#include "charges.hpp"

#include <variant>

#include "ids.hpp"
#include "statements.hpp"

namespace processor {
namespace {

struct Outcome {
  const char* status;
  const char* failure_code;  // nullptr unless failed
};

// Stripe-like test tokens: the card's behaviour is chosen by the caller.
Outcome outcome_for(const std::string& source) {
  if (source == "tok_decline") return {"failed", "card_declined"};
  if (source == "tok_requires_action") return {"requires_action", nullptr};
  return {"succeeded", nullptr};
}

Json nullable_text(const pqxx::field& field) {
  return field.is_null() ? Json(nullptr) : Json(field.as<std::string>());
}

ApiResponse no_such_charge(const std::string& id) {
  return api_error(404, "invalid_request_error", "resource_missing", "No such charge: '" + id + "'", "id");
}

}  // namespace

Json charge_json(const pqxx::row& row, const std::string& base_url) {
  const auto id = row["id"].as<std::string>();
  const auto status = row["status"].as<std::string>();
  Json charge;
  charge["id"] = id;
  charge["object"] = "charge";
  charge["amount_cents"] = row["amount_cents"].as<int64_t>();
  charge["amount_refunded_cents"] = row["amount_refunded_cents"].as<int64_t>();
  charge["currency"] = row["currency"].as<std::string>();
  charge["source"] = row["source"].as<std::string>();
  charge["description"] = nullable_text(row["description"]);
  charge["status"] = status;
  charge["failure_code"] = nullable_text(row["failure_code"]);
  charge["next_action"] = nullptr;
  if (status == "requires_action") {
    const std::string url = base_url + "/v1/charges/" + id + "/authorize";
    charge["next_action"] = Json{{"type", "redirect_to_url"}, {"redirect_to_url", Json{{"url", url}}}};
  }
  charge["idempotency_key"] = row["idempotency_key"].as<std::string>();
  charge["created"] = row["created"].as<int64_t>();
  charge["metadata"] = Json::parse(row["metadata"].as<std::string>());
  return charge;
}

ApiResponse create_charge(pqxx::work& tx, const ChargeRequest& request, const std::string& idempotency_key,
                          const std::string& base_url) {
  const Outcome outcome = outcome_for(request.source);
  const char* description = request.description ? request.description->c_str() : nullptr;
  const pqxx::row row =
      tx.exec_prepared1(stmt::kChargeInsert, new_object_id("ch_"), request.amount_cents, request.currency,
                        request.source, description, request.metadata_json, outcome.status, outcome.failure_code,
                        idempotency_key);
  if (outcome.failure_code == nullptr) return json_response(201, charge_json(row, base_url));

  Json error = error_object("card_error", outcome.failure_code, "Your card was declined.");
  error["decline_code"] = "generic_decline";
  error["charge"] = row["id"].as<std::string>();
  return json_response(402, Json{{"error", error}});
}

ApiResponse find_charge(pqxx::work& tx, const std::string& id, const std::string& base_url) {
  const pqxx::result found = tx.exec_prepared(stmt::kChargeFind, id);
  if (found.empty()) return no_such_charge(id);
  return json_response(200, charge_json(found[0], base_url));
}

ApiResponse list_charges(pqxx::work& tx, const ListQuery& query, const std::string& base_url) {
  const auto parsed = parse_list_page(query);
  if (const auto* refused = std::get_if<ApiResponse>(&parsed)) return *refused;
  const ListPage& page = std::get<ListPage>(parsed);
  if (query.starting_after && tx.exec_prepared(stmt::kChargeFind, *query.starting_after).empty())
    return no_such_starting_after("charge", *query.starting_after);
  const pqxx::result rows =
      tx.exec_prepared(stmt::kChargeList, query.idempotency_key, page.created_gte, query.starting_after, page.rows_to_fetch());
  return list_response("/v1/charges", rows, page, [&](const pqxx::row& row) { return charge_json(row, base_url); });
}

ApiResponse authorize_charge(pqxx::work& tx, const std::string& id, const std::string& base_url) {
  tx.exec_prepared(stmt::kChargeAuthorize, id);
  const pqxx::result found = tx.exec_prepared(stmt::kChargeFind, id);
  if (found.empty()) return no_such_charge(id);
  if (found[0]["status"].as<std::string>() != "succeeded")
    return api_error(400, "invalid_request_error", "charge_unexpected_state",
                     "Charge '" + id + "' was declined; only a charge that requires action can be authorized", "id");
  return json_response(200, charge_json(found[0], base_url));
}

}  // namespace processor
