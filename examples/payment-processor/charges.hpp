// Charges: creating one (the outcome depends on the test token, as with Stripe's tok_*), reading,
// listing and authorizing. Each runs inside the caller's transaction.
#pragma once

#include <pqxx/pqxx>

#include <optional>
#include <string>

#include "api_response.hpp"
#include "list_page.hpp"
#include "requests.hpp"

namespace processor {

// 201 with the charge (succeeded, or requires_action with next_action), or 402 card_declined for
// tok_decline — a declined charge is recorded too, with status "failed".
// base_url: where this processor is reachable, for next_action's authorize URL.
ApiResponse create_charge(pqxx::work& tx, const ChargeRequest& request, const std::string& idempotency_key,
                          const std::string& base_url);

ApiResponse find_charge(pqxx::work& tx, const std::string& id, const std::string& base_url);

// GET /v1/charges, paged as list_page.hpp says; 400 naming the parameter for a limit or
// created_gte that is not a number in range, or a starting_after that names no charge.
ApiResponse list_charges(pqxx::work& tx, const ListQuery& query, const std::string& base_url);

// What the buyer's redirect does: requires_action becomes succeeded; repeating it changes nothing.
ApiResponse authorize_charge(pqxx::work& tx, const std::string& id, const std::string& base_url);

// A charge row (statements.cpp's charge columns) as the API shows it.
Json charge_json(const pqxx::row& row, const std::string& base_url);

}  // namespace processor
