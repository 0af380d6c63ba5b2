#include "extension/citus/shard_route.hpp"

#include <string>
#include <unordered_map>

#include "core/error.hpp"
#include "extension/boundary.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/datum_convert.hpp"
#include "extension/hot_path/kept_plan.hpp"

namespace idem::citus {
namespace {

// Citus's lock class for the metadata of a hash-distributed table's colocated shards
// (ADV_LOCKTAG_CLASS_CITUS_COLOCATED_SHARDS_METADATA in its resource_lock.h): field 2 the shard
// index, field 3 the colocation id. Its executor takes it in ShareLock before it writes a shard;
// a shard move or split takes it in ExclusiveLock on every node before it changes a placement.
constexpr uint16 kColocatedShardsMetadataLock = 8;
constexpr std::size_t kMaxRoutes = 4096;  // tenants remembered per backend; all forgotten past it

struct Entry {
  uint64 epoch = 0;
  bool local = false;
  int32 colocation_id = 0, shard_index = 0;
  int32 placements = 0;  // of the tenant's shard, on every node
  ShardRoute route;
};

std::unordered_map<std::string, Entry> routes;
uint64 epoch = 1;

hot::KeptPlan route_plan{
    "SELECT keys_shard, keys_pkey_shard, retired_keys_shard, mutations_shard, keys_oid, keys_pkey_oid, colocation_id,"
    " shard_index, is_local, placements FROM idem._citus_shard_route($1)",
    1, {TEXTOID}, nullptr};
enum Column {
  kKeys = 1, kKeysPkey, kRetiredKeys, kMutations, kKeysOid, kKeysPkeyOid, kColocationId, kShardIndex, kIsLocal, kPlacements
};

std::string text_column(int n) {
  const hot::Value v = hot::column(n);
  if (v.null) return {};
  return std::string(datum::view(pg::guarded([&] { return DatumGetTextPP(v.datum); })));
}

// Under the latest snapshot: a REPEATABLE READ transaction's would show the placements of its
// start, before a move it did not wait for, and the route would name the table left behind.
Entry looked_up(Datum tenant_text) {
  hot::Args tenant;
  tenant.add(tenant_text);
  Entry e;
  e.epoch = epoch;  // before: an invalidation taken in during the lookup (Citus's cache takes them in) makes it stale
  hot::spi_connect();
  if (hot::execute_latest(route_plan, tenant, 1, SPI_OK_SELECT, "could not find the tenant's shards") != 1) {
    pg::raise_internal("pg_idempotency: idem._citus_shard_route returned no row");
  }
  e.route.tables.keys = text_column(kKeys);
  e.route.tables.retired_keys = text_column(kRetiredKeys);
  e.route.tables.mutations = text_column(kMutations);
  e.route.tables.shards = true;
  const hot::Value keys = hot::column(kKeysOid), pkey = hot::column(kKeysPkeyOid), local = hot::column(kIsLocal);
  e.route.keys = keys.null ? InvalidOid : DatumGetObjectId(keys.datum);
  e.route.keys_pkey = pkey.null ? InvalidOid : DatumGetObjectId(pkey.datum);
  e.colocation_id = DatumGetInt32(hot::column(kColocationId).datum);
  e.shard_index = DatumGetInt32(hot::column(kShardIndex).datum);
  e.local = !local.null && DatumGetBool(local.datum) && e.route.keys != InvalidOid && e.route.keys_pkey != InvalidOid;
  e.placements = DatumGetInt32(hot::column(kPlacements).datum);
  hot::spi_finish();
  return e;
}

// Plain C: the lock Citus's executor takes, then the invalidations a mover's commit sent.
void lock_shard_metadata_unsafe(int32 colocation_id, int32 shard_index) {
  LOCKTAG tag;
  SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, static_cast<uint32>(shard_index), static_cast<uint32>(colocation_id),
                       kColocatedShardsMetadataLock);
  (void)LockAcquire(&tag, ShareLock, false, false);
  AcceptInvalidationMessages();
}

}  // namespace

ShardRoute local_route(Datum tenant_text) {
  const std::string tenant(datum::view(pg::guarded([&] { return DatumGetTextPP(tenant_text); })));
  // A route is proven under the lock: looked up, locked, and no invalidation came in meanwhile.
  for (int tries = 0; tries < 8; ++tries) {
    auto it = routes.find(tenant);
    if (it == routes.end() || it->second.epoch != epoch) {
      if (routes.size() >= kMaxRoutes) routes.clear();
      Entry fresh = looked_up(tenant_text);
      it = routes.insert_or_assign(tenant, std::move(fresh)).first;
    }
    const Entry& e = it->second;
    pg::call(lock_shard_metadata_unsafe, e.colocation_id, e.shard_index);
    if (e.epoch != epoch) continue;  // its metadata changed while we waited: look again
    if (e.placements > 1) {  // a replica elsewhere: written here as a plain table, it would fall behind
      throw Error(ErrorCode::TenantNotLocal,
                  "ERR_TENANT_NOT_LOCAL: the shard of tenant " + tenant + " has " + std::to_string(e.placements) +
                      " placements; pg_idempotency on Citus keeps one (citus.shard_replication_factor = 1)",
                  "Drop the extra placements (docs/citus.md).");
    }
    if (!e.local) {
      throw Error(ErrorCode::TenantNotLocal, "ERR_TENANT_NOT_LOCAL: the shard of tenant " + tenant + " is not on this node",
                  "Call through the coordinator, or on the node that holds the tenant's shard (docs/citus.md).");
    }
    return e.route;
  }
  throw Error(ErrorCode::Internal, "ERR_INTERNAL: the shard metadata of tenant " + tenant + " kept changing");
}

void forget_routes() { ++epoch; }

}  // namespace idem::citus

namespace idem::citus {
namespace {

// idem._tenant_tables(tenant): where the tenant's rows are on this node, for the PL/pgSQL that
// writes them as the fast path does (idem._purge_expired): {keys, retired_keys, mutations}. On one
// node idem's own tables; on Citus the tenant's shards, with Citus's shard metadata lock held
// (ERR_TENANT_NOT_LOCAL unless they are placed here). STRICT in SQL.
Datum tenant_tables(FunctionCallInfo fcinfo) {
  statements::Tables tables;
  if (distributed()) tables = local_route(PG_GETARG_DATUM(0)).tables;
  return datum::text_array_datum({tables.keys, tables.retired_keys, tables.mutations});
}

}  // namespace
}  // namespace idem::citus

IDEM_SQL_FUNCTION(idem_tenant_tables, idem::citus::tenant_tables)
