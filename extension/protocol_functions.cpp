// SQL-callable pieces of the acquisition protocol that PL/pgSQL asks C for: the decision table
// (core/protocol), giving back a key's lock after a refusal, elapsed-time leases and TTLs, and
// raising our errors by name from the one table (core/error.cpp).
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/protocol/decision.hpp"
#include "extension/boundary.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/key_lock.hpp"

namespace idem {
namespace {

protocol::RecordStatus status_arg(FunctionCallInfo fcinfo) {
  if (PG_ARGISNULL(0)) return protocol::RecordStatus::Absent;
  const std::string_view s = *datum::text_arg(fcinfo, 0);
  if (s == "in_progress") return protocol::RecordStatus::InProgress;
  if (s == "resolved") return protocol::RecordStatus::Resolved;
  if (s == "released") return protocol::RecordStatus::Released;
  throw Error(ErrorCode::ArgumentInvalid, "unknown record status '" + std::string(s) + "'");
}

const char* decision_name(protocol::Decision d) {
  switch (d) {
    case protocol::Decision::Insert: return "insert";
    case protocol::Decision::NewGeneration: return "new_generation";
    case protocol::Decision::FreshAttempt: return "fresh_attempt";
    case protocol::Decision::Resume: return "resume";
    case protocol::Decision::Replay: return "replay";
    case protocol::Decision::Mismatch: return "mismatch";
    case protocol::Decision::Busy: return "busy";
  }
  return "busy";
}

bool bool_arg(FunctionCallInfo fcinfo, int n) { return !PG_ARGISNULL(n) && PG_GETARG_BOOL(n); }

// _decide(status, history, lease_live, own_transaction, has_checkpoint, same_payload
//         [, payload_pinned]) -> text; an older schema declares the first six only.
Datum decide(FunctionCallInfo fcinfo) {
  protocol::RecordView r;
  r.status = status_arg(fcinfo);
  r.history = bool_arg(fcinfo, 1);
  r.lease_live = bool_arg(fcinfo, 2);
  r.own_transaction = bool_arg(fcinfo, 3);
  r.has_checkpoint = bool_arg(fcinfo, 4);
  r.same_payload = bool_arg(fcinfo, 5);
  r.payload_pinned = PG_NARGS() > 6 && bool_arg(fcinfo, 6);
  return datum::text_datum(decision_name(protocol::decide(r)));
}

// _try_lock_key(key): take the key's lock if it is free, never waiting.
Datum try_lock_key(FunctionCallInfo fcinfo) { return BoolGetDatum(key_lock::try_take(PG_GETARG_INT64(0))); }

// _wait_lock_key(key): take it, waiting.
Datum wait_lock_key(FunctionCallInfo fcinfo) {
  key_lock::take(PG_GETARG_INT64(0));
  PG_RETURN_VOID();
}

// _unlock_key(key): give back the hold this call took when acquire refuses (a refused caller must
// hold nothing). A key this transaction already held (it is its holder) stays held.
Datum unlock_key(FunctionCallInfo fcinfo) { return BoolGetDatum(key_lock::give_back(PG_GETARG_INT64(0))); }

// _key_locked_by_me(key): this transaction holds the key (taking it again would succeed, since
// locks are re-entrant: purge must not mistake its caller's own unfinished key for a free one).
Datum key_locked_by_me(FunctionCallInfo fcinfo) { return BoolGetDatum(key_lock::held_by_me(PG_GETARG_INT64(0))); }

// A lease or TTL argument: NULL takes the setting's default; the result is pure elapsed time,
// positive and at most the bound.
Datum bounded_elapsed(FunctionCallInfo fcinfo, const char* what, int default_seconds, const char* default_guc,
                      int max_seconds, const char* max_guc) {
  const int64_t max_usecs = static_cast<int64_t>(max_seconds) * USECS_PER_SEC;
  int64_t usecs = static_cast<int64_t>(default_seconds) * USECS_PER_SEC;
  const bool defaulted = PG_ARGISNULL(0);
  if (!defaulted) {
    const auto given = datum::elapsed_usecs(*PG_GETARG_INTERVAL_P(0));
    usecs = given ? *given : INT64_MAX;
  }
  if (usecs > 0 && usecs <= max_usecs) return datum::interval_datum(usecs);
  const std::string got = usecs == INT64_MAX ? "an interval too long to count"
                                             : std::to_string(usecs / USECS_PER_SEC) + " s";
  if (defaulted) {
    throw Error(ErrorCode::ArgumentInvalid,
                std::string(default_guc) + " (" + got + ") exceeds " + max_guc + " (" + std::to_string(max_seconds) + " s)",
                std::string("Lower ") + default_guc + " or raise " + max_guc + ".");
  }
  throw Error(ErrorCode::ArgumentInvalid,
              std::string(what) + " must be a positive elapsed time of at most " + max_guc + " (" +
                  std::to_string(max_seconds) + " s), got " + got,
              std::string("Pass a ") + what + " such as '30 seconds'; a day counts as 24 hours.");
}

Datum lease(FunctionCallInfo fcinfo) {
  return bounded_elapsed(fcinfo, "lease", gucs::lease_timeout_seconds, "idem.lease_timeout", gucs::max_lease_seconds,
                         "idem.max_lease");
}

Datum ttl(FunctionCallInfo fcinfo) {
  return bounded_elapsed(fcinfo, "ttl", gucs::default_ttl_seconds, "idem.default_ttl", gucs::max_ttl_seconds,
                         "idem.max_ttl");
}

Datum wait_timeout(FunctionCallInfo) { return datum::interval_datum(static_cast<int64_t>(gucs::wait_timeout_ms) * 1000); }

Datum history_retention(FunctionCallInfo) {
  return datum::interval_datum(static_cast<int64_t>(gucs::history_retention_seconds) * USECS_PER_SEC);
}

// The generation idem.retired_keys holds for (tenant, digest) in the latest committed state, not in
// the caller's snapshot (0 when none). Plain C: called through pg::call.
// On Citus (citus_mode.hpp) the table here is a shell: the tenant's local shard is read.
int32 retired_generation_unsafe(text* tenant, bytea* digest, bool on_citus) {
  const Oid ns = get_namespace_oid("idem", false);
  Oid rel_oid = get_relname_relid("retired_keys", ns);
  Oid index_oid = get_relname_relid("retired_keys_pkey", ns);
  if (on_citus) citus::local_shard_unsafe("retired_keys", "retired_keys_pkey", tenant, &rel_oid, &index_oid);
  Relation rel = table_open(rel_oid, AccessShareLock);
  ScanKeyData keys[2];
  ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_TEXTEQ, PointerGetDatum(tenant));
  keys[0].sk_collation = C_COLLATION_OID;
  ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_BYTEAEQ, PointerGetDatum(digest));
  Snapshot latest = RegisterSnapshot(GetLatestSnapshot());
  SysScanDesc scan = systable_beginscan(rel, index_oid, true, latest, 2, keys);
  int32 found = 0;
  HeapTuple tuple = systable_getnext(scan);
  if (HeapTupleIsValid(tuple)) {
    bool isnull = false;
    const Datum value = heap_getattr(tuple, 3, RelationGetDescr(rel), &isnull);
    if (!isnull) found = DatumGetInt32(value);
  }
  systable_endscan(scan);
  UnregisterSnapshot(latest);
  table_close(rel, AccessShareLock);
  return found;
}

// A REPEATABLE READ or SERIALIZABLE acquire whose snapshot predates a purge of its key would
// otherwise start an old generation again.
Datum retired_generation_now(FunctionCallInfo fcinfo) {
  text* tenant = PG_GETARG_TEXT_PP(0);  // detoasted here, before any C++ object lives
  bytea* digest = PG_GETARG_BYTEA_PP(1);
  return Int32GetDatum(pg::call(retired_generation_unsafe, tenant, digest, citus::distributed()));
}

// _raise(name, message, hint): PL/pgSQL's way to raise one of our errors. The SQLSTATE comes from
// the table, so no SQL file types a code by hand.
Datum raise_named(FunctionCallInfo fcinfo) {
  const auto name = datum::text_arg(fcinfo, 0);
  const auto message = datum::text_arg(fcinfo, 1);
  const auto hint = datum::text_arg(fcinfo, 2);
  const auto code = name ? error_code_named(*name) : std::nullopt;
  if (!code) {
    throw Error(ErrorCode::Internal, "idem._raise: unknown error name '" + std::string(name.value_or("NULL")) + "'");
  }
  throw Error(*code, std::string(message.value_or("")), std::string(hint.value_or("")));
}

}  // namespace
}  // namespace idem

IDEM_SQL_FUNCTION(idem_decide, idem::decide)

IDEM_SQL_FUNCTION(idem_try_lock_key, idem::try_lock_key)

IDEM_SQL_FUNCTION(idem_wait_lock_key, idem::wait_lock_key)

IDEM_SQL_FUNCTION(idem_key_locked_by_me, idem::key_locked_by_me)

IDEM_SQL_FUNCTION(idem_unlock_key, idem::unlock_key)

IDEM_SQL_FUNCTION(idem_lease, idem::lease)

IDEM_SQL_FUNCTION(idem_ttl, idem::ttl)

IDEM_SQL_FUNCTION(idem_wait_timeout, idem::wait_timeout)

IDEM_SQL_FUNCTION(idem_history_retention, idem::history_retention)

IDEM_SQL_FUNCTION(idem_retired_generation_now, idem::retired_generation_now)

IDEM_SQL_FUNCTION(idem_raise, idem::raise_named)
