// idem.complete in C. The common call (valid arguments, from the lease's holder, the key's lock
// free) runs through kept plans: the key's lock without waiting, one UPDATE that checks the
// holder, one audit INSERT. Every other call goes to idem._complete_general, the PL/pgSQL
// reference, which waits where it must and names the refusal, so each rule and each message
// stays in one place. The fast path hands over holding nothing it took and having written nothing.
#include <optional>
#include <string>

#include "core/keys/handle.hpp"
#include "core/protocol/fast_path.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/citus/shard_route.hpp"
#include "extension/boundary.hpp"
#include "extension/gucs.hpp"
#include "extension/datum_convert.hpp"
#include "extension/hot_path/audit_append.hpp"
#include "extension/hot_path/kept_plan.hpp"
#include "extension/hot_path/pending_record.hpp"
#include "extension/hot_path/tenant_check.hpp"
#include "extension/key_lock.hpp"
#include "extension/store_functions.hpp"

namespace idem::hot {
namespace {

constexpr int kCompleteArgs = 9;  // handle, attempt, status, headers, body, order_id, handler_response, local_status, handler_called

KeptPlan general_complete{"SELECT idem._complete_general($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                          kCompleteArgs,
                          {TEXTOID, INT8OID, INT4OID, JSONBOID, BYTEAOID, TEXTOID, JSONBOID, TEXTOID, BOOLOID},
                          nullptr};

// One statement: the holder's checks (still leased to this attempt, the handle's secret) are in
// the WHERE clause, and RETURNING gives what the audit row needs (complete changes none of it).
// It never waits for a row lock: every writer of a record (acquire, checkpoint, complete,
// release, resolve_stuck, purge_expired) holds its key's lock while it holds the row, and this
// call holds the key's lock.
std::string resolve_sql(const statements::Tables& tables) {
  return "UPDATE " + tables.keys +
         " k SET status = 'resolved', response_status = $3, response_headers = coalesce($4, '{}'::jsonb),"
         " response_body = coalesce($5, ''::bytea), order_id = $6, handler_response = $7, local_status = $8,"
         " lease_expires_at = NULL, resolved_at = $9, expires_at = $9 + k.ttl"
         " WHERE k.tenant_id = $1 COLLATE \"C\" AND k.scope_digest = $2 AND k.status = 'in_progress' AND k.attempt = $10"
         " AND (k.lease_secret_hash IS NULL OR k.lease_secret_hash = $11)"
         " RETURNING k.client_key, k.caller_id, k.resource, k.generation, k.mutation_type, k.recovery_point,"
         " k.attempts_in_generation, coalesce(k.attempted_at, k.created_at)";
}
const std::string kResolveSql = resolve_sql({});
KeptPlan resolve{kResolveSql.c_str(),
                 11,
                 {TEXTOID, BYTEAOID, INT4OID, JSONBOID, BYTEAOID, TEXTOID, JSONBOID, TEXTOID, TIMESTAMPTZOID, INT8OID, BYTEAOID},
                 nullptr};
// On Citus, the same UPDATE of the tenant's shard of idem.keys (a plain table there).
KeptPlanPerTables resolve_on_shard{resolve_sql, resolve};
enum Returned { kClientKey = 1, kCallerId, kResource, kGeneration, kMutationType, kRecoveryPoint, kRetries, kAttemptedAt };

Datum run_general(FunctionCallInfo fcinfo) {
  Args args;
  for (int i = 0; i < kCompleteArgs; ++i) args.add(arg_value(fcinfo, i));
  spi_connect();
  (void)execute(general_complete, args, 1, SPI_OK_SELECT, "idem._complete_general failed");
  spi_finish();
  PG_RETURN_VOID();
}

// On Citus: the shards of the handle's tenant (ERR_TENANT_NOT_LOCAL unless they are here), or
// nullopt for a handle that does not parse (the general path names it).
std::optional<citus::ShardRoute> shards_of_handle(FunctionCallInfo fcinfo) {
  if (PG_ARGISNULL(0)) return std::nullopt;
  const auto parsed = keys::parse_handle(datum::view(pg::guarded([&] { return PG_GETARG_TEXT_PP(0); })));
  if (!parsed) return std::nullopt;
  return citus::local_route(datum::text_datum(parsed->tenant));
}

// The response as a resolution writes it: status, headers, body, order_id, handler_response,
// local_status, resolved at `now` (the order of the UPDATE's $3..$9 and of the pending INSERT's).
Args& add_response(Args& args, FunctionCallInfo fcinfo, int32 status, TimestampTz now) {
  args.add(Int32GetDatum(status));
  for (int n = 3; n <= 7; ++n) args.add(arg_value(fcinfo, n));
  return args.add(TimestampTzGetDatum(now));
}

// The audit row of a completion: what the call says; the caller adds what the record says.
AuditRow completion_audit(FunctionCallInfo fcinfo, TimestampTz now) {
  AuditRow audit;
  audit.outcome = Value::of(datum::text_datum("completed"));
  audit.handler_called = arg_value(fcinfo, 8);
  audit.order_id = arg_value(fcinfo, 5);
  audit.handler_response = arg_value(fcinfo, 6);
  audit.local_status = arg_value(fcinfo, 7);
  audit.completed_at = Value::of(TimestampTzGetDatum(now));
  return audit;
}

// What complete's UPDATE writes, as one INSERT of the pending record, and its audit row.
Datum complete_pending(FunctionCallInfo fcinfo, const pending::Held& held, int32 status) {
  const TimestampTz now = GetCurrentTimestamp();
  Args response;
  pending::write_resolved(held, add_response(response, fcinfo, status, now));
  const RecordParams& p = held.params;
  AuditRow audit = completion_audit(fcinfo, now);
  audit.tenant_id = Value::of(p.tenant_id);
  audit.scope_digest = Value::of(p.scope_digest);
  audit.client_key = Value::of(p.client_key);
  audit.caller_id = Value::of(p.caller_id);
  audit.resource = Value::of(p.resource);
  audit.generation = Value::of(Int32GetDatum(held.generation));
  audit.attempt = Value::of(Int64GetDatum(held.attempt));
  audit.mutation_type = Value::of(p.mutation_type);
  audit.retry_count = Value::of(Int32GetDatum(1));  // a pending record is its generation's first attempt
  audit.attempted_at = Value::of(p.now);
  spi_connect();
  append_audit(audit);
  spi_finish();
  PG_RETURN_VOID();
}

Datum complete(FunctionCallInfo fcinfo) {
  // Which calls this path tries is core's predicate (protocol::fast_path_completes): every refusal
  // is the general path's to name.
  protocol::CompleteCall call;
  // On Citus the tables here are shells: the fast path works on the tenant's shards, which must be
  // on this node; the general path's SQL otherwise, which Citus routes.
  std::optional<citus::ShardRoute> shards;
  if (citus::distributed()) {
    shards = shards_of_handle(fcinfo);
    if (!shards) return run_general(fcinfo);
  }
  call.enabled = gucs::fast_path;
  call.required_present = !(PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(8));
  if (!call.enabled || !call.required_present) return run_general(fcinfo);
  call.status = PG_GETARG_INT32(2);
  text* const handle_text = pg::guarded([&] { return PG_GETARG_TEXT_PP(0); });
  text* const order_id = PG_ARGISNULL(5) ? nullptr : pg::guarded([&] { return PG_GETARG_TEXT_PP(5); });
  Jsonb* const headers = PG_ARGISNULL(3) ? nullptr : pg::guarded([&] { return PG_GETARG_JSONB_P(3); });
  call.order_id_bytes = order_id == nullptr ? 0 : static_cast<int>(VARSIZE_ANY_EXHDR(order_id));
  call.headers_object = headers == nullptr || JB_ROOT_IS_OBJECT(headers);
  const auto handle = keys::parse_handle(datum::view(handle_text));
  call.handle_has_secret = handle && !handle->lease_secret.empty();
  if (!protocol::fast_path_completes(call)) return run_general(fcinfo);
  const int32 status = call.status;

  require_durable_store_now();
  const int64 attempt = PG_GETARG_INT64(1);
  const int64 lock = key_lock::of_digest(handle->scope_digest);
  const hash::Digest secret_hash = hash::sha256(handle->lease_secret);
  const Datum tenant = datum::text_datum(handle->tenant);
  const Datum digest = datum::bytea_datum(handle->scope_digest);

  require_tenant(tenant);
  // The record this transaction's acquire kept pending: written once, resolved.
  pending::Held held;
  const auto bytes = [](const hash::Digest& d) { return std::string_view(reinterpret_cast<const char*>(d.data()), d.size()); };
  if (!shards && pending::find(handle->tenant, bytes(handle->scope_digest), attempt, bytes(secret_hash), &held) &&
      key_lock::held_by_me(lock)) {
    return complete_pending(fcinfo, held, status);
  }
  spi_connect();
  const TimestampTz now = GetCurrentTimestamp();
  Args update;
  update.add(tenant).add(digest);
  add_response(update, fcinfo, status, now).add(Int64GetDatum(attempt)).add(datum::bytea_datum(secret_hash));
  // Another transaction writing the key (the general path waits, within bounds), or no row: lost,
  // purged, taken over or the wrong secret. Either way nothing was written: the general path names which.
  const bool locked = key_lock::try_take(lock);
  KeptPlan& plan = shards ? resolve_on_shard.of(shards->tables) : resolve;
  const long resolved = locked ? static_cast<long>(execute(plan, update, 0, SPI_OK_UPDATE_RETURNING, "could not resolve the key's record")) : 0;
  if (!protocol::fast_path_resolved(locked, resolved)) {
    if (locked) key_lock::give_back(lock);
    spi_finish();
    return run_general(fcinfo);
  }
  AuditRow audit = completion_audit(fcinfo, now);
  audit.tenant_id = Value::of(tenant);
  audit.scope_digest = Value::of(digest);
  audit.client_key = column(kClientKey);
  audit.caller_id = column(kCallerId);
  audit.resource = column(kResource);
  audit.generation = column(kGeneration);
  audit.attempt = Value::of(Int64GetDatum(attempt));
  audit.mutation_type = column(kMutationType);
  audit.recovery_point = column(kRecoveryPoint);
  audit.retry_count = column(kRetries);
  audit.attempted_at = column(kAttemptedAt);
  append_audit(audit, shards ? &shards->tables : nullptr);
  spi_finish();
  PG_RETURN_VOID();
}

}  // namespace
}  // namespace idem::hot

IDEM_SQL_FUNCTION(idem_complete, idem::hot::complete)
