#include "extension/machine_tables.hpp"

#include "extension/pg/as_user.hpp"

namespace idem::machines {
namespace {

SPIPlanPtr lookup_plan = nullptr;

const char* copy_column(MemoryContext into, int n) {
  const char* value = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, n);
  return value == nullptr ? nullptr : MemoryContextStrdup(into, value);
}

void lookup(const char* schema, const char* table, MemoryContext caller, TableRegistration* out) {
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (lookup_plan == nullptr) {
    Oid types[2] = {TEXTOID, TEXTOID};
    SPIPlanPtr plan = SPI_prepare(
        "SELECT machine, status_column, key_column, tenant_column FROM idem.machine_tables"
        " WHERE table_schema = $1 AND table_name = $2",
        2, types);
    if (plan == nullptr || SPI_keepplan(plan) != 0) elog(ERROR, "pg_idempotency: could not prepare the registration lookup");
    lookup_plan = plan;
  }
  Datum values[2] = {CStringGetTextDatum(schema), CStringGetTextDatum(table)};
  if (SPI_execute_plan(lookup_plan, values, nullptr, true, 1) != SPI_OK_SELECT) {
    elog(ERROR, "pg_idempotency: could not read idem.machine_tables");
  }
  if (SPI_processed == 1) {
    out->found = true;
    out->machine = copy_column(caller, 1);
    out->status_column = copy_column(caller, 2);
    out->key_column = copy_column(caller, 3);
    out->tenant_column = copy_column(caller, 4);
  }
  SPI_finish();
}

}  // namespace

void read_registration(Relation rel, Oid owner, TableRegistration* out) {
  const MemoryContext caller = CurrentMemoryContext;
  const char* schema = get_namespace_name(RelationGetNamespace(rel));
  const char* table = RelationGetRelationName(rel);
  *out = TableRegistration{false, false, quote_qualified_identifier(schema, table), nullptr, nullptr, nullptr, nullptr};
  if (get_relname_relid("machine_tables", get_namespace_oid("idem", false)) == InvalidOid) {
    out->schema_outdated = true;
    return;
  }
  pg::as_user(owner, [&] { lookup(schema, table, caller, out); });
}

}  // namespace idem::machines
