#include "processor_export.hpp"

#include <httplib.h>

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace reconcile {
namespace {

std::string quoted_table(pqxx::transaction_base& tx, const std::string& table) {
  const auto dot = table.find('.');
  if (dot == std::string::npos) return tx.quote_name(table);
  return tx.quote_name(table.substr(0, dot)) + "." + tx.quote_name(table.substr(dot + 1));
}

nlohmann::json get_json(httplib::Client& http, const std::string& path) {
  const auto r = http.Get(path.c_str());
  if (!r) throw std::runtime_error("GET " + path + ": no answer (" + httplib::to_string(r.error()) + ")");
  if (r->status != 200) throw std::runtime_error("GET " + path + ": HTTP " + std::to_string(r->status) + ": " + r->body);
  auto body = nlohmann::json::parse(r->body, nullptr, false);
  if (!body.is_object() || !body["data"].is_array()) throw std::runtime_error("GET " + path + ": not a list: " + r->body);
  return body;
}

// A member as the export table holds it: a string, or an integer for amount and created; anything
// else (absent, null, another type) is null, loaded as is, and reconcile reports the row as one it
// cannot reconcile (kind unreadable_export_row) instead of the load failing or guessing.
nlohmann::json text_member(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? *it : nlohmann::json();
}
nlohmann::json integer_member(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_number_integer() ? *it : nlohmann::json();
}

nlohmann::json export_row(const nlohmann::json& object) {
  return {{"id", text_member(object, "id")},
          {"object", text_member(object, "object")},
          {"idempotency_key", text_member(object, "idempotency_key")},
          {"amount_cents", integer_member(object, "amount_cents")},
          {"currency", text_member(object, "currency")},
          {"status", text_member(object, "status")},
          {"created", integer_member(object, "created")},
          {"charge", text_member(object, "charge")}};
}

// Every object of a list endpoint created since created_gte, a page of 100 at a time, into rows.
std::size_t fetch_list(httplib::Client& http, const std::string& endpoint, std::int64_t created_gte, nlohmann::json& rows,
                       std::size_t& pages) {
  std::size_t objects = 0;
  std::string after;
  for (bool more = true; more;) {
    const std::string path = endpoint + "?limit=100&created_gte=" + std::to_string(created_gte) +
                             (after.empty() ? "" : "&starting_after=" + httplib::detail::encode_query_param(after));
    const nlohmann::json page = get_json(http, path);
    ++pages;
    for (const auto& object : page["data"]) {
      nlohmann::json row = export_row(object);
      // The id is the table's key and the next page's cursor: without it neither works.
      if (!row["id"].is_string() || row["id"].get<std::string>().empty())
        throw std::runtime_error("GET " + path + ": an object without an id: " + object.dump());
      after = row["id"].get<std::string>();
      rows.push_back(std::move(row));
      ++objects;
    }
    more = page.value("has_more", false) && !page["data"].empty();
  }
  return objects;
}

}  // namespace

std::string export_table_ddl(pqxx::transaction_base& tx, const std::string& table) {
  return "CREATE TABLE IF NOT EXISTS " + quoted_table(tx, table) +
         " (id text PRIMARY KEY, object text, idempotency_key text, amount_cents bigint, currency text, status text,"
         " created timestamptz, charge text, loaded_at timestamptz NOT NULL DEFAULT now())";
}

ExportCounts load_export(pqxx::connection& db, const std::string& processor_url, const std::string& table,
                         std::int64_t created_gte) {
  httplib::Client http(processor_url);
  http.set_connection_timeout(5, 0);
  http.set_read_timeout(30, 0);
  ExportCounts counts;
  nlohmann::json rows = nlohmann::json::array();
  counts.charges = fetch_list(http, "/v1/charges", created_gte, rows, counts.pages);
  counts.refunds = fetch_list(http, "/v1/refunds", created_gte, rows, counts.pages);

  // The window replaced, not appended to: a charge listed again (its status or refunded amount
  // moved on) keeps one row, and one the processor no longer lists in the window leaves.
  pqxx::work tx(db);
  tx.exec(export_table_ddl(tx, table));
  const std::string name = quoted_table(tx, table);
  const std::string recordset =
      " FROM jsonb_to_recordset($1::jsonb) AS r(id text, object text, idempotency_key text, amount_cents bigint,"
      " currency text, status text, created bigint, charge text)";
  tx.exec_params("DELETE FROM " + name + " WHERE created >= to_timestamp($2) OR id IN (SELECT id" + recordset + ")",
                 rows.dump(), created_gte);
  tx.exec_params("INSERT INTO " + name + " (id, object, idempotency_key, amount_cents, currency, status, created, charge)"
          " SELECT id, object, idempotency_key, amount_cents, currency, status, to_timestamp(created), charge" + recordset,
          rows.dump());
  tx.commit();
  return counts;
}

}  // namespace reconcile
