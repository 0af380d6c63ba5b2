// Refunds; see refunds.hpp.
#include "refunds.hpp"

#include <variant>

#include "ids.hpp"
#include "statements.hpp"

namespace processor {
namespace {

Json refund_json(const pqxx::row& row) {
  return Json{{"id", row["id"].as<std::string>()},
              {"object", "refund"},
              {"charge", row["charge_id"].as<std::string>()},
              {"amount_cents", row["amount_cents"].as<int64_t>()},
              {"currency", row["currency"].as<std::string>()},
              {"status", row["status"].as<std::string>()},
              {"idempotency_key", row["idempotency_key"].as<std::string>()},
              {"created", row["created"].as<int64_t>()}};
}

ApiResponse invalid(std::string_view code, const std::string& message, std::string_view param) {
  return api_error(400, "invalid_request_error", code, message, param);
}

const char* nullable(const std::optional<std::string>& text) { return text ? text->c_str() : nullptr; }

}  // namespace

ApiResponse create_refund(pqxx::work& tx, const RefundRequest& request, const std::string& idempotency_key) {
  // FOR UPDATE: two refunds of one charge under different keys must not both pass the check below.
  const pqxx::result found = tx.exec_prepared(stmt::kChargeFindForUpdate, request.charge);
  if (found.empty())
    return api_error(404, "invalid_request_error", "resource_missing", "No such charge: '" + request.charge + "'",
                     "charge");
  const pqxx::row charge = found[0];
  const auto status = charge["status"].as<std::string>();
  if (status != "succeeded")
    return invalid("charge_not_refundable",
                   "Charge '" + request.charge + "' has status " + status + "; only a succeeded charge can be refunded",
                   "charge");
  const auto left = charge["amount_cents"].as<int64_t>() - charge["amount_refunded_cents"].as<int64_t>();
  if (left == 0)
    return invalid("charge_already_refunded", "Charge '" + request.charge + "' has already been refunded", "charge");
  const int64_t amount = request.amount_cents.value_or(left);
  if (amount > left)
    return invalid("amount_too_large",
                   "Refund amount (" + std::to_string(amount) + ") is greater than the charge's unrefunded amount (" +
                       std::to_string(left) + ")",
                   "amount_cents");

  tx.exec_prepared(stmt::kChargeAddRefunded, request.charge, amount);
  const pqxx::row refund = tx.exec_prepared1(stmt::kRefundInsert, new_object_id("re_"), request.charge, amount,
                                             charge["currency"].as<std::string>(), idempotency_key);
  return json_response(201, refund_json(refund));
}

ApiResponse find_refund(pqxx::work& tx, const std::string& id) {
  const pqxx::result found = tx.exec_prepared(stmt::kRefundFind, id);
  if (found.empty())
    return api_error(404, "invalid_request_error", "resource_missing", "No such refund: '" + id + "'", "id");
  return json_response(200, refund_json(found[0]));
}

ApiResponse list_refunds(pqxx::work& tx, const ListQuery& query, const std::optional<std::string>& charge) {
  const auto parsed = parse_list_page(query);
  if (const auto* refused = std::get_if<ApiResponse>(&parsed)) return *refused;
  const ListPage& page = std::get<ListPage>(parsed);
  if (query.starting_after && tx.exec_prepared(stmt::kRefundFind, *query.starting_after).empty())
    return no_such_starting_after("refund", *query.starting_after);
  const pqxx::result rows = tx.exec_prepared(stmt::kRefundList, nullable(query.idempotency_key), nullable(charge),
                                             page.created_gte, nullable(query.starting_after), page.rows_to_fetch());
  return list_response("/v1/refunds", rows, page, refund_json);
}

}  // namespace processor
