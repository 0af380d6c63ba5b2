// Refunds of succeeded charges, never more in total than the charge. Each runs inside the
// caller's transaction.
#pragma once

#include <pqxx/pqxx>

#include <optional>
#include <string>

#include "api_response.hpp"
#include "list_page.hpp"
#include "requests.hpp"

namespace processor {

// 201 with the refund; 404 unknown charge; 400 charge_not_refundable (not succeeded),
// charge_already_refunded, or amount_too_large (more than what is left to refund).
ApiResponse create_refund(pqxx::work& tx, const RefundRequest& request, const std::string& idempotency_key);

ApiResponse find_refund(pqxx::work& tx, const std::string& id);

// GET /v1/refunds, paged as list_page.hpp says, and only the charge's refunds when charge is given.
ApiResponse list_refunds(pqxx::work& tx, const ListQuery& query, const std::optional<std::string>& charge);

}  // namespace processor
