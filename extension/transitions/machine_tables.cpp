#include "extension/transitions/machine_tables.hpp"

#include <cstdlib>
#include <cstring>

#include "extension/pg/as_user.hpp"

namespace idem::machines {
namespace {

SPIPlanPtr lookup_plan = nullptr;

const char* copy_column(MemoryContext into, int n) {
  const char* value = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, n);
  return value == nullptr ? nullptr : MemoryContextStrdup(into, value);
}

// One table's registrations. The operators are spelled out: the trigger runs this as the
// log's owner under the writer's search_path, where an "=" of the writer's could be found first.
void lookup(const char* schema, const char* table, const char* status_column, MemoryContext caller,
            TableRegistration* out) {
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (lookup_plan == nullptr) {
    Oid types[3] = {TEXTOID, TEXTOID, TEXTOID};
    SPIPlanPtr plan = SPI_prepare(
        "SELECT machine, status_column, key_column, tenant_column FROM idem.machine_tables"
        " WHERE table_schema OPERATOR(pg_catalog.=) $1 AND table_name OPERATOR(pg_catalog.=) $2"
        " AND ($3 IS NULL OR status_column OPERATOR(pg_catalog.=) $3) LIMIT 2",
        3, types);
    if (plan == nullptr || SPI_keepplan(plan) != 0) elog(ERROR, "pg_idempotency: could not prepare the registration lookup");
    lookup_plan = plan;
  }
  Datum values[3] = {CStringGetTextDatum(schema), CStringGetTextDatum(table),
                     status_column ? CStringGetTextDatum(status_column) : Datum(0)};
  const char nulls[4] = {' ', ' ', status_column ? ' ' : 'n', '\0'};
  if (SPI_execute_plan(lookup_plan, values, nulls, true, 2) != SPI_OK_SELECT) {
    elog(ERROR, "pg_idempotency: could not read idem.machine_tables");
  }
  if (SPI_processed > 0) {
    out->found = true;
    out->ambiguous = SPI_processed > 1;
    out->table_name = MemoryContextStrdup(caller, quote_qualified_identifier(schema, table));
    out->machine = copy_column(caller, 1);
    out->status_column = copy_column(caller, 2);
    out->key_column = copy_column(caller, 3);
    out->tenant_column = copy_column(caller, 4);
  }
  SPI_finish();
}

void lookup_relation(Oid relid, const char* status_column, MemoryContext caller, TableRegistration* out) {
  lookup(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid), status_column, caller, out);
}

SPIPlanPtr shard_plan = nullptr;

// On a Citus node a row trigger fires on the shard the row is in (orders_102008), registered as
// its distributed table is: Citus names a shard <table>_<shard id>, in the table's schema, and
// pg_dist_shard maps the id back. InvalidOid when relid is no Citus shard (or Citus is absent).
Oid citus_table_of_shard(Oid relid) {
  if (get_relname_relid("pg_dist_shard", PG_CATALOG_NAMESPACE) == InvalidOid) return InvalidOid;
  const char* name = get_rel_name(relid);
  const char* suffix = name ? strrchr(name, '_') : nullptr;
  if (suffix == nullptr || suffix[1] == '\0' || strspn(suffix + 1, "0123456789") != strlen(suffix + 1) || strlen(suffix + 1) > 18) {
    return InvalidOid;
  }
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (shard_plan == nullptr) {
    Oid types[1] = {INT8OID};
    SPIPlanPtr plan = SPI_prepare("SELECT logicalrelid::pg_catalog.oid FROM pg_catalog.pg_dist_shard WHERE shardid OPERATOR(pg_catalog.=) $1", 1, types);
    if (plan == nullptr || SPI_keepplan(plan) != 0) elog(ERROR, "pg_idempotency: could not prepare the shard lookup");
    shard_plan = plan;
  }
  Datum values[1] = {Int64GetDatum(strtoll(suffix + 1, nullptr, 10))};
  if (SPI_execute_plan(shard_plan, values, nullptr, true, 1) != SPI_OK_SELECT) elog(ERROR, "pg_idempotency: could not read pg_dist_shard");
  Oid table = InvalidOid;
  if (SPI_processed == 1) {
    bool isnull = false;
    const Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    if (!isnull) table = DatumGetObjectId(d);
  }
  SPI_finish();
  // The shard's name must be the table's with the id appended, in the same schema.
  const char* table_name = table != InvalidOid ? get_rel_name(table) : nullptr;
  if (table_name == nullptr || get_rel_namespace(table) != get_rel_namespace(relid) ||
      strlen(table_name) != static_cast<size_t>(suffix - name) || strncmp(table_name, name, suffix - name) != 0) {
    return InvalidOid;
  }
  return table;
}

}  // namespace

void read_registration(Relation rel, const char* status_column, Oid owner, TableRegistration* out) {
  const MemoryContext caller = CurrentMemoryContext;
  *out = TableRegistration{false, false, false,
                           quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)), RelationGetRelationName(rel)),
                           nullptr, nullptr, nullptr, nullptr};
  if (get_relname_relid("machine_tables", get_namespace_oid("idem", false)) == InvalidOid) {
    out->schema_outdated = true;
    return;
  }
  // A row trigger on a partitioned table fires on the partition the row is in.
  List* ancestors = rel->rd_rel->relispartition ? get_partition_ancestors(RelationGetRelid(rel)) : NIL;
  pg::as_user(owner, [&] {
    lookup_relation(RelationGetRelid(rel), status_column, caller, out);
    ListCell* cell;
    foreach (cell, ancestors) {
      if (out->found) break;
      lookup_relation(lfirst_oid(cell), status_column, caller, out);
    }
    if (!out->found) {
      const Oid distributed = citus_table_of_shard(RelationGetRelid(rel));
      if (distributed != InvalidOid) lookup_relation(distributed, status_column, caller, out);
    }
  });
}

}  // namespace idem::machines
