// A payment processor's export of charges and refunds (its list API: GET /v1/charges and
// GET /v1/refunds, paginated as Stripe's), loaded into a table idem.reconcile reads (docs/runbook.md
// "Reconcile with the processor").
#pragma once

#include <cstdint>
#include <string>

#include <pqxx/pqxx>

namespace reconcile {

struct ExportCounts {
  std::size_t charges = 0, refunds = 0, pages = 0;
};

// Fetches every charge and refund created at or after created_gte (unix seconds) and replaces
// the table's rows of that window (`table`, created when missing) in one transaction. Throws
// std::runtime_error naming the request that failed.
ExportCounts load_export(pqxx::connection& db, const std::string& processor_url, const std::string& table,
                         std::int64_t created_gte);

// The CREATE TABLE of an export table (`schema.name` or `name`), quoted for this connection.
std::string export_table_ddl(pqxx::transaction_base& tx, const std::string& table);

}  // namespace reconcile
