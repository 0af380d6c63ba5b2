// idem._acquire in C. The three calls a service makes all day run through kept plans: a new key
// (one read, the key's lock, one INSERT) and the answers that take no lock (replay, mismatch,
// in_progress, each with its audit row). Every other case -- an argument to refuse, a lock to
// wait for, a takeover, a resume, a new generation, a snapshot older than READ COMMITTED's --
// goes to idem._acquire_general, the PL/pgSQL reference, which decides from the start. The fast
// path hands over before it writes anything and holding nothing it took (docs/hot-path.md).
#include <cstring>

#include "core/keys/handle.hpp"
#include "core/protocol/decision.hpp"
#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/hot_path/acquire.hpp"
#include "extension/hot_path/audit_append.hpp"
#include "extension/hot_path/kept_plan.hpp"
#include "extension/hot_path/tenant_check.hpp"
#include "extension/key_lock.hpp"
#include "extension/store_functions.hpp"

namespace idem::hot {
namespace {

using namespace call_arg;

KeptPlan general_acquire{
    "SELECT idem._acquire_general($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    kAcquireArgs,
    {TEXTOID, BYTEAOID, TEXTOID, BYTEAOID, TEXTOID, TEXTOID, INTERVALOID, INTERVALOID, TEXTOID, TEXTOID},
    nullptr};

enum RecordColumn {
  kStatus = 1, kGeneration, kSameRequest, kHasCheckpoint, kResponseStatus, kResponseHeaders, kResponseBody,
  kOrderId, kLeaseExpiresAt, kExpiresAt, kAttemptsInGeneration, kRowXmin
};
KeptPlan read_record{
    "SELECT k.status, k.generation, k.payload_hash = $3 AND k.mutation_type = $4, k.recovery_point IS NOT NULL,"
    " k.response_status::integer, k.response_headers, k.response_body, k.order_id, k.lease_expires_at, k.expires_at,"
    " k.attempts_in_generation, k.xmin"
    " FROM idem.keys k WHERE k.tenant_id = $1 COLLATE \"C\" AND k.scope_digest = $2",
    4,
    {TEXTOID, BYTEAOID, BYTEAOID, TEXTOID},
    nullptr};

KeptPlan insert_record{
    // The generation is one above the high-water mark a purge of this key left (idem.retired_keys).
    "INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,"
    " caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type,"
    " attempted_at, attempts_in_generation, lease_secret_hash)"
    " VALUES ($1, $2, 'in_progress', nextval('idem.fencing_token_seq'),"
    " 1 + coalesce((SELECT g.generation FROM idem.retired_keys g WHERE g.tenant_id = $1 COLLATE \"C\" AND g.scope_digest = $2), 0),"
    " $3, idem.fingerprint_scheme(), $4, $5, $6, $7, $8, $9 + $7, $9, $9 + $7 + $8, $10, $9, 1, $11)"
    " ON CONFLICT DO NOTHING RETURNING k.attempt, k.generation, k.lease_expires_at",
    11,
    {TEXTOID, BYTEAOID, BYTEAOID, TEXTOID, TEXTOID, TEXTOID, INTERVALOID, INTERVALOID, TIMESTAMPTZOID, TEXTOID,
     BYTEAOID},
    nullptr};

std::string_view text_of(const AcquireCall& call, int n) {
  return datum::view(pg::guarded([&] { return DatumGetTextPP(call.value[n]); }));
}

bool text_is(const AcquireCall& call, int n, const char* const* allowed) {
  if (call.null[n]) return false;
  const std::string_view value = text_of(call, n);
  for (; *allowed != nullptr; ++allowed) {
    if (value == *allowed) return true;
  }
  return false;
}

// A lease or TTL as idem._lease / idem._ttl give it, or 0 when they would refuse it (the general
// path then names the error).
int64 bounded_usecs(const AcquireCall& call, int n, int default_seconds, int max_seconds) {
  const int64 max_usecs = static_cast<int64>(max_seconds) * USECS_PER_SEC;
  int64 usecs = static_cast<int64>(default_seconds) * USECS_PER_SEC;
  if (!call.null[n]) {
    const auto given = datum::elapsed_usecs(*DatumGetIntervalP(call.value[n]));
    if (!given) return 0;
    usecs = *given;
  }
  return usecs > 0 && usecs <= max_usecs ? usecs : 0;
}

Datum run_general(const AcquireCall& call) {
  return pg::guarded([&] {
    Args args;
    for (int i = 0; i < kAcquireArgs; ++i) {
      if (call.null[i]) args.add_null();
      else args.add(call.value[i]);
    }
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
    if (execute(general_acquire, args, 1) != SPI_OK_SELECT || SPI_processed != 1) {
      elog(ERROR, "pg_idempotency: idem._acquire_general failed");
    }
    bool is_null = false;
    Datum result = SPI_datumTransfer(column(1, &is_null), false, -1);  // into the caller's context
    SPI_finish();
    return result;
  });
}

// The idem.acquire_result being built, by attribute name (the type gained lease_expires_at in 0.1.1).
struct Result {
  TupleDesc desc;
  Datum values[16];
  bool nulls[16];
  void set(const char* name, Datum value) {
    for (int i = 0; i < desc->natts; ++i) {
      const Form_pg_attribute a = TupleDescAttr(desc, i);
      if (!a->attisdropped && std::strcmp(NameStr(a->attname), name) == 0) {
        values[i] = value;
        nulls[i] = false;
        return;
      }
    }
    elog(ERROR, "pg_idempotency: idem.acquire_result has no attribute %s", name);
  }
  void copy(const char* name, HeapTuple row, TupleDesc row_desc, int column) {
    bool is_null = false;
    const Datum v = SPI_getbinval(row, row_desc, column, &is_null);
    if (!is_null) set(name, v);
  }
};

TupleDesc result_desc(FunctionCallInfo fcinfo) {
  return pg::guarded([&] {
    TupleDesc desc = nullptr;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE || desc->natts > 16) {
      elog(ERROR, "pg_idempotency: idem._acquire must return idem.acquire_result");
    }
    return BlessTupleDesc(desc);
  });
}

// 32 lower-case hex digits of 128 random bits: the lease's secret (core/keys/handle.hpp).
void draw_secret(char out[keys::kLeaseSecretDigits + 1]) {
  unsigned char bytes[keys::kLeaseSecretDigits / 2];
  if (!pg_strong_random(bytes, sizeof bytes)) throw Error(ErrorCode::Internal, "ERR_INTERNAL: no random bytes for a lease secret");
  static const char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof bytes; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[keys::kLeaseSecretDigits] = '\0';
}

protocol::RecordStatus status_of(std::string_view s) {
  if (s == "in_progress") return protocol::RecordStatus::InProgress;
  if (s == "resolved") return protocol::RecordStatus::Resolved;
  return protocol::RecordStatus::Released;  // the CHECK allows nothing else; the general path decides
}

bool flag(HeapTuple row, TupleDesc desc, int column) {
  bool is_null = false;
  const Datum v = SPI_getbinval(row, desc, column, &is_null);
  return !is_null && DatumGetBool(v);
}

// column > now and column <= now, NULL false in both, as SQL's comparisons feed _decide.
bool later_than(HeapTuple row, TupleDesc desc, int column, TimestampTz now) {
  bool is_null = false;
  const Datum v = SPI_getbinval(row, desc, column, &is_null);
  return !is_null && DatumGetTimestampTz(v) > now;
}
bool passed(HeapTuple row, TupleDesc desc, int column, TimestampTz now) {
  bool is_null = false;
  const Datum v = SPI_getbinval(row, desc, column, &is_null);
  return !is_null && DatumGetTimestampTz(v) <= now;
}

const char* const kOnBusyModes[] = {"reject", "wait", nullptr};
const char* const kMutationTypes[] = {"create", "capture", "refund", "void", nullptr};

// What one acquire call carries into its two fast cases.
struct Attempt {
  const AcquireCall& call;
  TupleDesc desc;              // idem.acquire_result
  Datum lease, ttl;            // intervals, already bounded
  const std::string& handle;   // the plain handle "<tenant>:<digest hex>"
  int64 lock;                  // the key's lock
  bool wait_mode, read_committed;
  MemoryContext caller_context;  // where the answer must live (SPI's context ends with SPI_finish)
  TimestampTz now;
};

HeapTuple form_answer(const Attempt& a, Result& result) {
  const MemoryContext spi_context = MemoryContextSwitchTo(a.caller_context);
  HeapTuple tuple = heap_form_tuple(a.desc, result.values, result.nulls);
  MemoryContextSwitchTo(spi_context);
  return tuple;
}

// No record: take the key's lock without waiting and insert generation high-water + 1. nullptr
// when the general path must decide: not READ COMMITTED (an older snapshot must first prove no
// purge it cannot see retired the key), the lock taken by another transaction (refuse or wait,
// there), or a record committed after our read (the lock is given back first).
HeapTuple insert_new_record(const Attempt& a) {
  const AcquireCall& call = a.call;
  if (!a.read_committed || !key_lock::try_take(a.lock)) return nullptr;
  char secret[keys::kLeaseSecretDigits + 1];
  draw_secret(secret);
  const hash::Digest secret_hash = hash::sha256(std::string_view(secret, keys::kLeaseSecretDigits));
  Args row;
  row.add(call.value[kTenant]).add(call.value[kDigest]).add(call.value[kHash]).add(call.value[kCaller]);
  row.add(call.value[kResource]).add(call.value[kKey]).add(a.lease).add(a.ttl).add(TimestampTzGetDatum(a.now));
  row.add(call.value[kMutationType]).add(datum::bytea_datum(secret_hash));
  if (execute(insert_record, row, 1) != SPI_OK_INSERT_RETURNING) elog(ERROR, "pg_idempotency: could not insert the key's record");
  if (SPI_processed != 1) {
    key_lock::give_back(a.lock);
    return nullptr;
  }
  bool is_null = false;
  Result result{a.desc, {}, {}};
  for (bool& n : result.nulls) n = true;
  result.set("outcome", CStringGetTextDatum("acquired"));
  result.set("attempt", column(1, &is_null));
  result.set("generation", column(2, &is_null));
  result.set("lease_expires_at", column(3, &is_null));
  // Only the holder learns the secret; the record keeps its SHA-256.
  const std::size_t n = a.handle.size();
  char* handle = static_cast<char*>(palloc(n + 1 + keys::kLeaseSecretDigits + 1));
  std::memcpy(handle, a.handle.data(), n);
  handle[n] = ':';
  std::memcpy(handle + n + 1, secret, keys::kLeaseSecretDigits + 1);
  result.set("handle", CStringGetTextDatum(handle));
  return form_answer(a, result);
}

// A record: the answers that take no lock (replay, mismatch, in_progress when not waiting), each
// with its audit row. nullptr for a decision that writes under the lock, or a wait.
HeapTuple answer_from_record(const Attempt& a, HeapTuple row, TupleDesc row_desc) {
  const AcquireCall& call = a.call;
  bool is_null = false;
  protocol::RecordView view;
  view.status = status_of(datum::view(DatumGetTextPP(SPI_getbinval(row, row_desc, kStatus, &is_null))));
  view.history = passed(row, row_desc, kExpiresAt, a.now);
  view.lease_live = later_than(row, row_desc, kLeaseExpiresAt, a.now);
  view.own_transaction = view.status == protocol::RecordStatus::InProgress &&
                         TransactionIdIsCurrentTransactionId(DatumGetTransactionId(SPI_getbinval(row, row_desc, kRowXmin, &is_null)));
  view.has_checkpoint = flag(row, row_desc, kHasCheckpoint);
  view.same_payload = flag(row, row_desc, kSameRequest);
  const protocol::Decision decision = protocol::decide(view);
  const bool answers = decision == protocol::Decision::Replay || decision == protocol::Decision::Mismatch ||
                       (decision == protocol::Decision::Busy && (!a.wait_mode || !a.read_committed || view.own_transaction));
  if (!answers) return nullptr;
  const char* outcome = protocol::outcome_name(decision);
  Result result{a.desc, {}, {}};
  for (bool& n : result.nulls) n = true;
  result.set("outcome", CStringGetTextDatum(outcome));
  result.set("handle", CStringGetTextDatum(a.handle.c_str()));
  result.copy("generation", row, row_desc, kGeneration);
  if (decision == protocol::Decision::Replay) {
    result.copy("order_id", row, row_desc, kOrderId);
    result.copy("response_status", row, row_desc, kResponseStatus);
    result.copy("response_headers", row, row_desc, kResponseHeaders);
    result.copy("response_body", row, row_desc, kResponseBody);
  } else if (decision == protocol::Decision::Busy) {
    result.set("retry_after", Int32GetDatum(gucs::retry_after_seconds));
  }
  // A read-only transaction (a standby) still gets its answer, without the audit row it cannot
  // write: a refusal executes nothing, so no mutation goes unlogged.
  if ((decision != protocol::Decision::Replay || gucs::audit_replays) && !XactReadOnly) {
    Args audit;
    audit.add(call.value[kTenant]).add(call.value[kDigest]).add(call.value[kKey]);
    audit.add(call.value[kCaller]).add(call.value[kResource]);
    add_column(row, row_desc, kGeneration, audit);
    audit.add_null();  // attempt: a refusal runs none
    audit.add(call.value[kMutationType]).add(CStringGetTextDatum(outcome)).add(BoolGetDatum(false));
    add_column(row, row_desc, kOrderId, audit);
    audit.add_null().add_null().add_null().add_null();  // handler response, local status, error, recovery point
    const Datum retries = SPI_getbinval(row, row_desc, kAttemptsInGeneration, &is_null);
    audit.add(is_null ? Int32GetDatum(0) : retries);
    audit.add(TimestampTzGetDatum(a.now)).add_null();
    append_audit(audit);
  }
  return form_answer(a, result);
}

}  // namespace

Datum acquire(const AcquireCall& call, FunctionCallInfo fcinfo) {
  const int64 lease = bounded_usecs(call, kLease, gucs::lease_timeout_seconds, gucs::max_lease_seconds);
  const int64 ttl = bounded_usecs(call, kTtl, gucs::default_ttl_seconds, gucs::max_ttl_seconds);
  if (lease == 0 || ttl == 0 || !text_is(call, kOnBusy, kOnBusyModes) || !text_is(call, kMutationType, kMutationTypes) ||
      call.null[kTenant] || call.null[kDigest] || call.null[kKey] || call.null[kHash] || call.null[kCaller] ||
      call.null[kResource]) {
    return run_general(call);
  }
  const std::string_view tenant = text_of(call, kTenant);
  const bytea* digest_arg = pg::guarded([&] { return DatumGetByteaPP(call.value[kDigest]); });
  if (VARSIZE_ANY_EXHDR(digest_arg) != sizeof(hash::Digest)) return run_general(call);
  hash::Digest digest;
  std::memcpy(digest.data(), VARDATA_ANY(digest_arg), digest.size());

  // The general path's order: its lease and TTL, the tenant, the arguments, then durability.
  pg::guarded([&] { require_tenant(call.value[kTenant]); });
  require_durable_store_now();
  const std::string plain_handle = keys::format_handle(tenant, digest);
  Attempt attempt{call,
                  result_desc(fcinfo),
                  datum::interval_datum(lease),
                  datum::interval_datum(ttl),
                  plain_handle,
                  key_lock::of_digest(digest),
                  text_of(call, kOnBusy) == "wait",
                  XactIsoLevel == XACT_READ_COMMITTED,
                  CurrentMemoryContext,
                  0};

  HeapTuple answer = pg::guarded([&]() -> HeapTuple {
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
    Args key;
    key.add(call.value[kTenant]).add(call.value[kDigest]).add(call.value[kHash]).add(call.value[kMutationType]);
    if (execute(read_record, key, 1) != SPI_OK_SELECT) elog(ERROR, "pg_idempotency: could not read the key's record");
    attempt.now = GetCurrentTimestamp();
    HeapTuple tuple = SPI_processed == 0 ? insert_new_record(attempt)
                                         : answer_from_record(attempt, SPI_tuptable->vals[0], SPI_tuptable->tupdesc);
    SPI_finish();
    return tuple;  // nullptr: the general path decides
  });
  if (answer == nullptr) return run_general(call);
  return HeapTupleGetDatum(answer);
}

}  // namespace idem::hot
