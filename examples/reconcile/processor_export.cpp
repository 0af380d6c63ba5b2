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

nlohmann::json export_row(const nlohmann::json& object) {
  return {{"id", object.value("id", "")},
          {"object", object.value("object", "")},
          {"idempotency_key", object.value("idempotency_key", "")},
          {"amount_cents", object.value("amount_cents", 0)},
          {"currency", object.value("currency", "")},
          {"status", object.value("status", "")},
          {"created", object.value("created", 0)},
          {"charge", object.value("charge", nlohmann::json())}};
}

}  // namespace

std::string export_table_ddl(pqxx::transaction_base& tx, const std::string& table) {
  return "CREATE TABLE IF NOT EXISTS " + quoted_table(tx, table) +
         " (id text PRIMARY KEY, object text NOT NULL CHECK (object IN ('charge', 'refund')), idempotency_key text,"
         " amount_cents bigint NOT NULL, currency text NOT NULL, status text NOT NULL, created timestamptz NOT NULL,"
         " charge text, loaded_at timestamptz NOT NULL DEFAULT now())";
}

ExportCounts load_export(pqxx::connection& db, const std::string& processor_url, const std::string& table,
                         std::int64_t created_gte) {
  httplib::Client http(processor_url);
  http.set_connection_timeout(5, 0);
  http.set_read_timeout(30, 0);
  ExportCounts counts;
  nlohmann::json rows = nlohmann::json::array();
  std::string after;
  for (bool more = true; more;) {  // a page of 100 at a time, as the list API allows
    const std::string path = "/v1/charges?limit=100&created_gte=" + std::to_string(created_gte) +
                             (after.empty() ? "" : "&starting_after=" + after);
    const nlohmann::json page = get_json(http, path);
    ++counts.pages;
    for (const auto& charge : page["data"]) {
      rows.push_back(export_row(charge));
      after = charge.value("id", "");
      ++counts.charges;
    }
    more = page.value("has_more", false) && !page["data"].empty();
  }
  const nlohmann::json refunds = get_json(http, "/v1/refunds");  // kept: the loop must not range over a temporary's member
  for (const auto& refund : refunds["data"]) {
    if (refund.value("created", 0) < created_gte) continue;
    rows.push_back(export_row(refund));
    ++counts.refunds;
  }
  ++counts.pages;

  // Replaced, not appended: a charge listed again (its status or refunded amount moved on) keeps one row.
  pqxx::work tx(db);
  tx.exec(export_table_ddl(tx, table));
  const std::string name = quoted_table(tx, table);
  const std::string recordset =
      " FROM jsonb_to_recordset($1::jsonb) AS r(id text, object text, idempotency_key text, amount_cents bigint,"
      " currency text, status text, created bigint, charge text)";
  tx.exec_params("DELETE FROM " + name + " WHERE id IN (SELECT id" + recordset + ")", rows.dump());
  tx.exec_params("INSERT INTO " + name + " (id, object, idempotency_key, amount_cents, currency, status, created, charge)"
          " SELECT id, object, idempotency_key, amount_cents, currency, status, to_timestamp(created), charge" + recordset,
          rows.dump());
  tx.commit();
  return counts;
}

}  // namespace reconcile
