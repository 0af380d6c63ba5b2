// The paging of the list API (GET /v1/charges, GET /v1/refunds), as Stripe's: oldest first,
// `limit` per page (1..100; without it, every match), the page after `starting_after` (an id),
// only what was created at or after `created_gte` (unix seconds), and "has_more".
#pragma once

#include <pqxx/pqxx>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "api_response.hpp"

namespace processor {

// The list parameters as the request carried them (absent: nullopt).
struct ListQuery {
  std::optional<std::string> idempotency_key;  // only the objects created under it
  std::optional<std::string> created_gte;
  std::optional<std::string> starting_after;
  std::optional<std::string> limit;
};

struct ListPage {
  std::optional<std::int64_t> limit, created_gte;
  // What the list statement's LIMIT gets: one more than the page, to tell whether there is a next.
  std::optional<std::int64_t> rows_to_fetch() const;
};

// The page asked for, or 400 invalid_request_error naming the parameter that is not a number in range.
std::variant<ListPage, ApiResponse> parse_list_page(const ListQuery& query);

// 400 resource_missing for a starting_after naming no object of this kind.
ApiResponse no_such_starting_after(const std::string& kind, const std::string& id);

// {"object":"list","url","has_more","data"} of rows fetched with page.rows_to_fetch().
ApiResponse list_response(const std::string& url, const pqxx::result& rows, const ListPage& page,
                          const std::function<Json(const pqxx::row&)>& to_json);

}  // namespace processor
