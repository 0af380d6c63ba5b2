// Whether this database runs on Citus, and where a tenant's shard is. Only catalog reads and SQL:
// the library never links Citus, and works the same without it.
#include "extension/citus/citus_mode.hpp"

#include <cstdio>

#include "extension/boundary.hpp"
#include "extension/citus/shard_route.hpp"
#include "extension/hot_path/kept_plan.hpp"

namespace idem::citus {
namespace {

enum class State { Unknown, Plain, Distributed };

State state = State::Unknown;
Oid keys_table = InvalidOid;  // learnt at the probe

// Until idem.keys is known (no extension yet in this database), any invalidation may be its making.
// Citus invalidates idem.keys' entry whenever its shards or placements change: the routes too.
void forget(Datum, Oid relid) {
  if (relid != InvalidOid && relid != keys_table && keys_table != InvalidOid) return;
  state = State::Unknown;
  forget_routes();
}

// Citus's catalog pg_dist_partition lists its tables (column 1, logicalrelid). Read with the
// catalog snapshot, as a relcache build would: the metadata is what this backend's caches hold.
State probe_unsafe() {
  const Oid ns = get_namespace_oid("idem", true);  // the planner hook asks in every database
  keys_table = ns == InvalidOid ? InvalidOid : get_relname_relid("keys", ns);
  const Oid partitions = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
  if (keys_table == InvalidOid || partitions == InvalidOid) return State::Plain;
  Relation rel = table_open(partitions, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(keys_table));
  SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, nullptr, 1, &key);
  const bool found = HeapTupleIsValid(systable_getnext(scan));
  systable_endscan(scan);
  table_close(rel, AccessShareLock);
  return found ? State::Distributed : State::Plain;
}

hot::KeptPlan require_local_plan{"SELECT idem._citus_require_local($1)", 1, {TEXTOID}, nullptr};

[[noreturn]] void not_local_unsafe(text* tenant) {
  ereport(ERROR, (errcode(MAKE_SQLSTATE('I', 'K', '0', '2', '9')),
                  errmsg("ERR_TENANT_NOT_LOCAL: the shard of tenant %s is not on this node", text_to_cstring(tenant)),
                  errhint("Call through the coordinator, or on the node that holds the tenant's shard (docs/citus.md).")));
}

}  // namespace

bool distributed() {
  if (state == State::Unknown) state = pg::call(probe_unsafe);
  return state == State::Distributed;
}

void require_local(Datum tenant_text) {
  hot::Args tenant;
  tenant.add(tenant_text);
  hot::spi_connect();
  (void)hot::execute(require_local_plan, tenant, 1, SPI_OK_SELECT, "could not check where the tenant's shard is");
  hot::spi_finish();
}

void local_shard_unsafe(const char* table, const char* index, text* tenant, Oid* shard, Oid* shard_index) {
  char qualified[2 * NAMEDATALEN + 8];
  snprintf(qualified, sizeof qualified, "idem.%s", table);
  Datum args[2] = {CStringGetTextDatum(qualified), PointerGetDatum(tenant)};
  Oid types[2] = {TEXTOID, TEXTOID};
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  // The shard's id, NULL unless it is placed here: a moved shard's table lingers until Citus's
  // cleanup drops it, and its name alone would find it.
  if (SPI_execute_with_args("SELECT s.id FROM pg_catalog.get_shard_id_for_distribution_column($1::regclass, $2) AS s(id)"
                            " WHERE EXISTS (SELECT FROM pg_catalog.pg_dist_placement pl WHERE pl.shardid = s.id"
                            " AND pl.groupid = (SELECT l.groupid FROM pg_catalog.pg_dist_local_group l))",
                            2, types, args, nullptr, true, 1) != SPI_OK_SELECT) {
    elog(ERROR, "pg_idempotency: could not find the shard of idem.%s", table);
  }
  if (SPI_processed != 1) {
    SPI_finish();
    not_local_unsafe(tenant);
  }
  bool is_null = true;
  const int64 shard_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null));
  SPI_finish();
  if (is_null) elog(ERROR, "pg_idempotency: idem.%s has no shard for the tenant", table);
  // Citus names a shard and its indexes after the table's and index's names and the shard id.
  char name[NAMEDATALEN * 2];
  const Oid ns = get_namespace_oid("idem", false);
  snprintf(name, sizeof name, "%s_" INT64_FORMAT, table, shard_id);
  *shard = get_relname_relid(name, ns);
  snprintf(name, sizeof name, "%s_" INT64_FORMAT, index, shard_id);
  *shard_index = get_relname_relid(name, ns);
  if (*shard == InvalidOid || *shard_index == InvalidOid) not_local_unsafe(tenant);
}

void forget_relation(Oid relid) { forget(0, relid); }

}  // namespace idem::citus

namespace idem::citus {
namespace {

// idem._require_local_tenant(tenant): nothing on one node; on Citus, ERR_TENANT_NOT_LOCAL unless
// the tenant's shard is on this node. The PL/pgSQL entry points that take a key's lock call it.
Datum require_local_tenant(FunctionCallInfo fcinfo) {
  if (!PG_ARGISNULL(0) && distributed()) require_local(PG_GETARG_DATUM(0));
  PG_RETURN_VOID();
}

// idem._citus_mode(): whether this database runs on Citus (the PL/pgSQL entry points that cannot
// act on every tenant at once there refuse, naming their per-tenant form).
Datum citus_mode(FunctionCallInfo) { PG_RETURN_BOOL(distributed()); }

}  // namespace
}  // namespace idem::citus

IDEM_SQL_FUNCTION(idem_require_local_tenant, idem::citus::require_local_tenant)
IDEM_SQL_FUNCTION(idem_citus_mode, idem::citus::citus_mode)
