#include "extension/hot_path/tenant_check.hpp"

#include "extension/boundary.hpp"
#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {
namespace {

KeptPlan require_bound_tenant{"SELECT idem._require_tenant($1)", 1, {TEXTOID}, nullptr};

enum class Bindings { Unknown, None, Some };
Bindings bindings = Bindings::Unknown;
Oid bindings_table = InvalidOid;  // learnt at the first probe

void forget(Datum, Oid relid) {
  if (relid == InvalidOid || relid == bindings_table) bindings = Bindings::Unknown;
}

// Read under the latest snapshot, not the transaction's: a REPEATABLE READ snapshot older than
// a binding would otherwise be cached after that binding's invalidation was already absorbed,
// and the backend would stay unbound for good. Opening the table absorbs pending invalidations
// first; a binding committed after the snapshot taken here sends its invalidation later (it is
// sent after the commit becomes visible), so the answer cached here is forgotten then.
Bindings probe() {
  const Oid table = get_relname_relid("tenant_bindings", get_namespace_oid("idem", false));
  Relation rel = table_open(table, AccessShareLock);
  Snapshot latest = RegisterSnapshot(GetLatestSnapshot());
  SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, latest, 0, nullptr);
  const bool some = HeapTupleIsValid(systable_getnext(scan));
  systable_endscan(scan);
  UnregisterSnapshot(latest);
  table_close(rel, AccessShareLock);
  bindings_table = table;
  return some ? Bindings::Some : Bindings::None;
}

// idem._tenant_bindings_changed(): AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE FOR EACH
// STATEMENT on idem.tenant_bindings. The invalidation goes out with the commit (and is undone
// locally by a rollback), like a catalog change.
Datum bindings_changed(FunctionCallInfo fcinfo) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw Error(ErrorCode::Internal, "idem._tenant_bindings_changed must run as a trigger");
  TriggerData* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
  pg::guarded([&] { CacheInvalidateRelcache(trigger->tg_relation); });
  return PointerGetDatum(nullptr);
}

}  // namespace

void require_tenant(Datum tenant_text) {
  if (bindings == Bindings::Unknown) bindings = probe();
  if (bindings == Bindings::None) return;  // the common case: no SPI at all
  Args tenant;
  tenant.add(tenant_text);
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (execute(require_bound_tenant, tenant, 1) != SPI_OK_SELECT) elog(ERROR, "pg_idempotency: could not check the tenant binding");
  SPI_finish();
}

void register_binding_invalidation() { CacheRegisterRelcacheCallback(forget, 0); }

}  // namespace idem::hot

extern "C" {
PG_FUNCTION_INFO_V1(idem_tenant_bindings_changed);
Datum idem_tenant_bindings_changed(PG_FUNCTION_ARGS) { return idem::Invoke(idem::hot::bindings_changed, fcinfo); }
}
