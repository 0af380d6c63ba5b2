// The per-backend "is there any binding?" cache of idem.tenant_bindings and idem.consumer_bindings,
// the triggers that invalidate it, and idem._consumer_bindings_exist() for the PL/pgSQL outbox.
#include "extension/binding_cache.hpp"

#include "extension/boundary.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/pg/pg_error.hpp"

namespace idem::bindings {
namespace {

enum class State { Unknown, None, Some };

struct Cache {
  const char* relname;
  State state = State::Unknown;
  Oid table = InvalidOid;  // learnt at the first probe
};

Cache tenant_cache{"tenant_bindings"};
Cache consumer_cache{"consumer_bindings"};

Cache& cache_of(Table table) { return table == Table::Tenant ? tenant_cache : consumer_cache; }

void forget(Datum, Oid relid) {
  for (Cache* c : {&tenant_cache, &consumer_cache}) {
    if (relid == InvalidOid || relid == c->table) c->state = State::Unknown;
  }
}

// Read under the latest snapshot, not the transaction's: a REPEATABLE READ snapshot older than
// a binding would otherwise be cached after that binding's invalidation was already absorbed,
// and the backend would stay unbound for good. Opening the table absorbs pending invalidations
// first; a binding committed after the snapshot taken here sends its invalidation later (it is
// sent after the commit becomes visible), so the answer cached here is forgotten then.
State probe(Cache& c) {
  const Oid table = get_relname_relid(c.relname, get_namespace_oid("idem", false));
  if (table == InvalidOid) elog(ERROR, "pg_idempotency: table idem.%s is missing", c.relname);
  Relation rel = table_open(table, AccessShareLock);
  Snapshot latest = RegisterSnapshot(GetLatestSnapshot());
  SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, latest, 0, nullptr);
  const bool some = HeapTupleIsValid(systable_getnext(scan));
  systable_endscan(scan);
  UnregisterSnapshot(latest);
  table_close(rel, AccessShareLock);
  c.table = table;
  return some ? State::Some : State::None;
}

// The statement triggers of both tables (AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE). The
// invalidation goes out with the commit (and is undone locally by a rollback), like a catalog change.
Datum bindings_changed(FunctionCallInfo fcinfo) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw Error(ErrorCode::Internal, "a bindings trigger function must run as a trigger");
  TriggerData* trigger = reinterpret_cast<TriggerData*>(fcinfo->context);
  pg::call(CacheInvalidateRelcache, trigger->tg_relation);
  return PointerGetDatum(nullptr);
}

Datum consumer_bindings_exist(FunctionCallInfo fcinfo) {
  PG_RETURN_BOOL(may_be_bound(Table::Consumer));
}

}  // namespace

bool any(Table table) {
  Cache& c = cache_of(table);
  if (c.state == State::Unknown) c.state = probe(c);
  return c.state == State::Some;
}

bool may_be_bound(Table table) { return citus::distributed() || pg::call(any, table); }

void forget_relation(Oid relid) { forget(0, relid); }

}  // namespace idem::bindings

IDEM_SQL_FUNCTION(idem_tenant_bindings_changed, idem::bindings::bindings_changed)
IDEM_SQL_FUNCTION(idem_consumer_bindings_changed, idem::bindings::bindings_changed)
IDEM_SQL_FUNCTION(idem_consumer_bindings_exist, idem::bindings::consumer_bindings_exist)
