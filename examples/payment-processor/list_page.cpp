// The list API's paging; see list_page.hpp.
#include "list_page.hpp"

namespace processor {
namespace {

// A decimal integer in [lo, hi], all of text, or nullopt.
std::optional<std::int64_t> integer_in(const std::string& text, std::int64_t lo, std::int64_t hi) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::int64_t value = std::stoll(text);
  if (value < lo || value > hi) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::int64_t> ListPage::rows_to_fetch() const {
  return limit ? std::optional<std::int64_t>(*limit + 1) : std::nullopt;
}

std::variant<ListPage, ApiResponse> parse_list_page(const ListQuery& query) {
  ListPage page;
  if (query.limit) {
    page.limit = integer_in(*query.limit, 1, 100);
    if (!page.limit)
      return api_error(400, "invalid_request_error", "parameter_invalid_integer", "limit must be an integer from 1 to 100.",
                       "limit");
  }
  if (query.created_gte) {
    page.created_gte = integer_in(*query.created_gte, 0, 253402300799);  // up to 9999-12-31
    if (!page.created_gte)
      return api_error(400, "invalid_request_error", "parameter_invalid_integer", "created_gte must be a unix time in seconds.",
                       "created_gte");
  }
  return page;
}

ApiResponse no_such_starting_after(const std::string& kind, const std::string& id) {
  return api_error(400, "invalid_request_error", "resource_missing", "No such " + kind + ": '" + id + "'", "starting_after");
}

ApiResponse list_response(const std::string& url, const pqxx::result& rows, const ListPage& page,
                          const std::function<Json(const pqxx::row&)>& to_json) {
  const bool has_more = page.limit && rows.size() > static_cast<std::size_t>(*page.limit);
  Json data = Json::array();
  for (const auto& row : rows) {
    if (page.limit && data.size() == static_cast<std::size_t>(*page.limit)) break;
    data.push_back(to_json(row));
  }
  return json_response(200, Json{{"object", "list"}, {"url", url}, {"has_more", has_more}, {"data", data}});
}

}  // namespace processor
