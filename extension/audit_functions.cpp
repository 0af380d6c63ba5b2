// The audit trail's guard (append-only for every role, the owner included, except inside
// idem.purge_audit) and the identifiers derived from a key (core/keys/derived_ids.hpp).
#include <string>

#include "core/error.hpp"
#include "core/keys/derived_ids.hpp"
#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/store_functions.hpp"

namespace idem {
namespace {

// Set by idem.purge_audit while it deletes and cleared when it returns; any (sub)transaction
// abort clears it too (an error inside purge_audit must not leave it set for the caller).
bool audit_purge_allowed = false;

Datum allow_audit_purge(FunctionCallInfo fcinfo) {
  audit_purge_allowed = PG_GETARG_BOOL(0);
  PG_RETURN_VOID();
}

Datum min_audit_retention(FunctionCallInfo) {
  return datum::interval_datum(static_cast<int64>(gucs::min_audit_retention_seconds) * USECS_PER_SEC);
}

Datum refuse_audit_change(FunctionCallInfo fcinfo) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw Error(ErrorCode::ArgumentInvalid, "idem._refuse_audit_change() must be called as a trigger");
  TriggerData* td = reinterpret_cast<TriggerData*>(fcinfo->context);
  if (TRIGGER_FIRED_BY_DELETE(td->tg_event) && audit_purge_allowed) return PointerGetDatum(td->tg_trigtuple);
  const char* what = TRIGGER_FIRED_BY_UPDATE(td->tg_event)   ? "UPDATE"
                     : TRIGGER_FIRED_BY_DELETE(td->tg_event) ? "DELETE"
                                                             : "TRUNCATE";
  throw Error(ErrorCode::AuditAppendOnly,
              std::string(what) + " of " + RelationGetRelationName(td->tg_relation) + " is refused: the audit trail is append-only",
              "Rows leave it only through idem.purge_audit(older_than, batch).");
}

Datum elapsed(FunctionCallInfo fcinfo) {
  const auto usecs = datum::elapsed_usecs(*PG_GETARG_INTERVAL_P(0));
  if (!usecs || *usecs <= 0) throw Error(ErrorCode::ArgumentInvalid, "the interval must be a positive elapsed time");
  return datum::interval_datum(*usecs);
}

Datum derive_order_id(FunctionCallInfo fcinfo) {
  for (int n = 0; n < 4; ++n) {
    if (PG_ARGISNULL(n)) throw Error(ErrorCode::ArgumentInvalid, "derive_order_id: no argument may be NULL");
  }
  const std::string_view tenant = *datum::text_arg(fcinfo, 0);
  const std::string_view key = *datum::text_arg(fcinfo, 1);
  const int32 generation = PG_GETARG_INT32(2);
  const TimestampTz at = PG_GETARG_TIMESTAMPTZ(3);
  if (TIMESTAMP_NOT_FINITE(at)) throw Error(ErrorCode::ArgumentInvalid, "derive_order_id: at must be a finite time");
  // Unix seconds, rounded down (PostgreSQL counts microseconds from 2000-01-01). PostgreSQL's
  // range ends in 294276, far from overflowing this sum; checked all the same.
  int64 from_unix = 0;
  if (__builtin_add_overflow(at, static_cast<int64>(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC,
                             &from_unix)) {
    throw Error(ErrorCode::ArgumentInvalid, "derive_order_id: at is out of range");
  }
  const int64 seconds = from_unix >= 0 ? from_unix / USECS_PER_SEC : -((-from_unix + USECS_PER_SEC - 1) / USECS_PER_SEC);
  return datum::text_datum(keys::derive_order_id(tenant, key, generation, seconds));
}

Datum handler_key(FunctionCallInfo fcinfo) {
  const hash::Digest digest = datum::digest_arg(fcinfo, 0, "scope_digest");
  return datum::text_datum(keys::handler_key(digest, PG_GETARG_INT32(1)));
}

}  // namespace

void reset_audit_purge() { audit_purge_allowed = false; }

void reset_audit_purge_on_abort(SubXactEvent event, SubTransactionId, SubTransactionId, void*) {
  if (event == SUBXACT_EVENT_ABORT_SUB) audit_purge_allowed = false;
}

}  // namespace idem

IDEM_SQL_FUNCTION(idem_allow_audit_purge, idem::allow_audit_purge)

IDEM_SQL_FUNCTION(idem_refuse_audit_change, idem::refuse_audit_change)

IDEM_SQL_FUNCTION(idem_min_audit_retention, idem::min_audit_retention)

IDEM_SQL_FUNCTION(idem_elapsed, idem::elapsed)

IDEM_SQL_FUNCTION(idem_derive_order_id, idem::derive_order_id)

IDEM_SQL_FUNCTION(idem_handler_key, idem::handler_key)
