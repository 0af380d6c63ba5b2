// The three idem.acquire overloads (payload as jsonb, as JSON text, or its fingerprint), in C:
// they check the payload, compute the scope digest and the fingerprint with the same functions
// as idem.scope_digest and idem.payload_hash, and acquire (acquire.cpp). The checks and
// messages are those of the PL/pgSQL wrappers they replace.
#include "core/json/member_digests.hpp"
#include "extension/boundary.hpp"
#include "extension/hot_path/acquire.hpp"

extern "C" {
Datum idem_scope_digest(PG_FUNCTION_ARGS);
Datum idem_payload_hash_jsonb(PG_FUNCTION_ARGS);
Datum idem_payload_hash_text(PG_FUNCTION_ARGS);
}

namespace idem::hot {
namespace {

// idem.acquire's arguments: tenant, key, payload, caller, resource, lease, ttl, on_busy,
// mutation_type, and for the fingerprint form (0.4.0) payload_members.
enum Arg { kTenant, kKey, kPayload, kCaller, kResource, kLease, kTtl, kOnBusy, kMutationType, kPayloadMembers };

enum class Payload { Jsonb, Text, Hash };

// One of our SQL-callable C functions, called directly (it raises through its own boundary).
// Plain C: called through pg::call.
Datum call_ours_unsafe(PGFunction function, int nargs, const Datum* values, const bool* nulls) {
  LOCAL_FCINFO(call, 4);
  FmgrInfo info;
  memset(&info, 0, sizeof info);
  info.fn_mcxt = CurrentMemoryContext;
  info.fn_nargs = static_cast<short>(nargs);
  info.fn_oid = InvalidOid;
  InitFunctionCallInfoData(*call, &info, nargs, InvalidOid, nullptr, nullptr);
  for (int i = 0; i < nargs; ++i) {
    call->args[i].value = values[i];
    call->args[i].isnull = nulls[i];
  }
  const Datum result = function(call);
  if (call->isnull) elog(ERROR, "pg_idempotency: unexpected NULL from a digest");
  return result;
}

Datum call_ours(PGFunction function, int nargs, const Datum* values, const bool* nulls) {
  return pg::call(call_ours_unsafe, function, nargs, values, nulls);
}

Datum acquire_with(FunctionCallInfo fcinfo, Payload payload) {
  if (PG_ARGISNULL(kPayload)) {
    if (payload == Payload::Hash) {
      throw Error(ErrorCode::ArgumentInvalid, "payload_hash must be the 32-byte SHA-256 fingerprint, got NULL bytes",
                  "Compute it with idem.payload_hash() or the client library (same scheme, same bytes).");
    }
    throw Error(ErrorCode::ArgumentInvalid, "payload must not be NULL",
                "Pass the request body; use '{}' or 'null' for a request without one.");
  }
  if (payload == Payload::Hash) {
    const bytea* hash = pg::guarded([&] { return PG_GETARG_BYTEA_PP(kPayload); });
    if (VARSIZE_ANY_EXHDR(hash) != 32) {
      throw Error(ErrorCode::ArgumentInvalid,
                  "payload_hash must be the 32-byte SHA-256 fingerprint, got " + std::to_string(VARSIZE_ANY_EXHDR(hash)) + " bytes",
                  "Compute it with idem.payload_hash() or the client library (same scheme, same bytes).");
    }
  }
  const auto arg = [&](int n) { return PG_GETARG_DATUM(n); };
  // idem.scope_digest(tenant, caller, resource, key), in that order.
  const Datum parts[4] = {arg(kTenant), arg(kCaller), arg(kResource), arg(kKey)};
  const bool part_nulls[4] = {PG_ARGISNULL(kTenant), PG_ARGISNULL(kCaller), PG_ARGISNULL(kResource), PG_ARGISNULL(kKey)};
  AcquireCall call;
  call.set(call_arg::kDigest, call_ours(idem_scope_digest, 4, parts, part_nulls), false);
  call.set(call_arg::kMembers, 0, true);
  if (payload == Payload::Hash) {
    call.set(call_arg::kHash, arg(kPayload), false);
    // The caller's member digests (the client library computes them); absent before 0.4.0's SQL.
    if (PG_NARGS() > kPayloadMembers && !PG_ARGISNULL(kPayloadMembers)) {
      const bytea* members = pg::guarded([&] { return PG_GETARG_BYTEA_PP(kPayloadMembers); });
      if (!json::valid_member_digests(std::string_view(VARDATA_ANY(members), VARSIZE_ANY_EXHDR(members)))) {
        throw Error(ErrorCode::ArgumentInvalid,
                    "payload_members must be member digests as the client library computes them (format 1, at most " +
                        std::to_string(json::kMaxMemberDigestBytes) + " bytes), got " +
                        std::to_string(VARSIZE_ANY_EXHDR(members)) + " bytes that are not",
                    "Pass NULL to keep none; the client library (Request::name_differing_fields) computes them.");
      }
      call.set(call_arg::kMembers, arg(kPayloadMembers), false);
    }
  } else {
    const Datum args[2] = {arg(kPayload), PointerGetDatum(pg::call(construct_empty_array, Oid(TEXTOID)))};
    const bool nulls[2] = {false, false};
    call.set(call_arg::kHash, call_ours(payload == Payload::Jsonb ? idem_payload_hash_jsonb : idem_payload_hash_text, 2, args, nulls),
             false);
    // Checked and fingerprinted above, so its member digests cannot fail; computed only if needed.
    call.payload = arg(kPayload);
    call.payload_is_jsonb = payload == Payload::Jsonb;
    call.members_pending = true;
  }
  const int same[][2] = {{call_arg::kTenant, kTenant}, {call_arg::kKey, kKey},       {call_arg::kCaller, kCaller},
                         {call_arg::kResource, kResource}, {call_arg::kLease, kLease}, {call_arg::kTtl, kTtl},
                         {call_arg::kOnBusy, kOnBusy},     {call_arg::kMutationType, kMutationType}};
  for (const auto& [position, n] : same) call.set(position, arg(n), PG_ARGISNULL(n));
  return acquire(call, fcinfo);
}

Datum acquire_jsonb(FunctionCallInfo fcinfo) { return acquire_with(fcinfo, Payload::Jsonb); }
Datum acquire_text(FunctionCallInfo fcinfo) { return acquire_with(fcinfo, Payload::Text); }
Datum acquire_hash(FunctionCallInfo fcinfo) { return acquire_with(fcinfo, Payload::Hash); }

}  // namespace
}  // namespace idem::hot

IDEM_SQL_FUNCTION(idem_acquire_jsonb, idem::hot::acquire_jsonb)

IDEM_SQL_FUNCTION(idem_acquire_text, idem::hot::acquire_text)

IDEM_SQL_FUNCTION(idem_acquire_hash, idem::hot::acquire_hash)

