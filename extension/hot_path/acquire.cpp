// idem._acquire in C. The three calls a service makes all day run through kept plans: a new key
// (one read, the key's lock, one INSERT) and the answers that take no lock (replay, mismatch,
// in_progress, each with its audit row). Every other case -- an argument to refuse, a lock to
// wait for, a takeover, a resume, a new generation, a snapshot older than READ COMMITTED's --
// goes to idem._acquire_general, the PL/pgSQL reference, which decides from the start. The fast
// path hands over before it writes anything and holding nothing it took (docs/hot-path.md).
#include <cstring>

#include "core/keys/derived_ids.hpp"
#include "core/keys/handle.hpp"
#include "core/protocol/decision.hpp"
#include "core/protocol/fast_path.hpp"
#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/hot_path/acquire.hpp"
#include "extension/hot_path/audit_append.hpp"
#include "extension/hot_path/kept_plan.hpp"
#include "extension/hot_path/record_lookup.hpp"
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

KeptPlan insert_record{
    // The generation is one above the high-water mark a purge of this key left (idem.retired_keys).
    // $12, the key scope tenant: nothing is inserted while another record owns the key (read, not
    // waited for: its owner may be writing it in an open transaction); the general path answers.
    "INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,"
    " caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type,"
    " attempted_at, attempts_in_generation, lease_secret_hash)"
    " SELECT $1, $2, 'in_progress', nextval('idem.fencing_token_seq'),"
    " 1 + coalesce((SELECT g.generation FROM idem.retired_keys g WHERE g.tenant_id = $1 COLLATE \"C\" AND g.scope_digest = $2), 0),"
    " $3, idem.fingerprint_scheme(), $4, $5, $6, $7, $8, $9 + $7, $9, $9 + $7 + $8, $10, $9, 1, $11"
    " WHERE NOT ($12 AND EXISTS (SELECT 1 FROM idem.keys o WHERE o.tenant_id = $1 COLLATE \"C\""
    " AND o.client_key = $6 COLLATE \"C\" AND o.key_scope = 'tenant'))"
    " ON CONFLICT DO NOTHING RETURNING k.attempt, k.generation, k.lease_expires_at",
    12,
    {TEXTOID, BYTEAOID, BYTEAOID, TEXTOID, TEXTOID, TEXTOID, INTERVALOID, INTERVALOID, TIMESTAMPTZOID, TEXTOID,
     BYTEAOID, BOOLOID},
    nullptr};

// The same on a schema before 0.3.6 (no key_scope: keys own nothing), until ALTER EXTENSION UPDATE.
KeptPlan insert_record_before_key_scope{
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
  void copy(const char* name, const Record& record, field::RecordField f) {
    if (!record.null[f]) set(name, record.value[f]);
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

// 128 bits from OpenSSL's generator, drawn 256 secrets at a time: each RAND_bytes call pays for
// the generator's locking and set-up (8 % of acquire's time for a new key when drawn one by one).
// A backend fills its pool at its first new key; the postmaster never does, so no two processes
// share one. A secret's bytes are wiped from the pool as they are handed out.
constexpr int kPooledSecrets = 256;
bool random_secret_bytes(unsigned char out[keys::kLeaseSecretDigits / 2]) {
  constexpr std::size_t n = keys::kLeaseSecretDigits / 2;
  static unsigned char pool[kPooledSecrets * n];
  static int left = 0;
  if (left == 0) {
    if (!pg_strong_random(pool, sizeof pool)) return false;
    left = kPooledSecrets;
  }
  unsigned char* next = pool + static_cast<std::size_t>(--left) * n;
  std::memcpy(out, next, n);
  explicit_bzero(next, n);
  return true;
}

// 32 lower-case hex digits of 128 random bits: the lease's secret (core/keys/handle.hpp).
void draw_secret(char out[keys::kLeaseSecretDigits + 1]) {
  unsigned char bytes[keys::kLeaseSecretDigits / 2];
  if (!random_secret_bytes(bytes)) throw Error(ErrorCode::Internal, "ERR_INTERNAL: no random bytes for a lease secret");
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

// column > now and column <= now, NULL false in both, as SQL's comparisons feed _decide.
bool later_than(const Record& record, field::RecordField f, TimestampTz now) {
  return !record.null[f] && DatumGetTimestampTz(record.value[f]) > now;
}
bool passed(const Record& record, field::RecordField f, TimestampTz now) {
  return !record.null[f] && DatumGetTimestampTz(record.value[f]) <= now;
}

bool same_varlena(Datum a, Datum b) {
  const bytea* x = DatumGetByteaPP(a);
  const bytea* y = DatumGetByteaPP(b);
  return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) && std::memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
}

// payload_hash = the call's AND mutation_type = the call's, NULL false (the call's are not NULL).
bool same_request(const Record& record, const AcquireCall& call) {
  return !record.null[field::kPayloadHash] && !record.null[field::kMutationType] &&
         same_varlena(record.value[field::kPayloadHash], call.value[kHash]) &&
         same_varlena(record.value[field::kMutationType], call.value[kMutationType]);  // text compares as bytes ("C")
}

const char* const kOnBusyModes[] = {"reject", "wait", nullptr};

// idem._owner_lock_key(tenant, key): the key's lock of sha256("owner:" tenant LF key).
int64 owner_lock_key(std::string_view tenant, std::string_view key) {
  std::string text = "owner:";
  text.append(tenant).append("\n").append(key);
  return key_lock::of_digest(hash::sha256(text));
}
const char* const kMutationTypes[] = {"create", "capture", "refund", "void", nullptr};

// What one acquire call carries into its two fast cases.
struct Attempt {
  const AcquireCall& call;
  TupleDesc desc;              // idem.acquire_result
  Datum lease, ttl;            // intervals, already bounded
  const std::string& handle;   // the plain handle "<tenant>:<digest hex>"
  const hash::Digest& digest;  // the scope digest
  int64 lock;                  // the key's lock
  int64 owner_lock;            // the (tenant, key) owner's lock; 0 under the key scope route
  bool schema_has_key_scope;   // idem.keys.key_scope exists (0.3.6)
  protocol::FastCall call_view;  // which decisions the fast path answers (core/protocol/fast_path.hpp)
  MemoryContext caller_context;  // where the answer must live (SPI's context ends with SPI_finish)
  TimestampTz now;
  mutable int32 new_generation;  // set when a new record was inserted
};

// The processor key goes with the lease and never later: a holder that asked for it after its
// lease was taken over and its record began a new generation got the next request's key. The
// key is computed by the caller, outside any PostgreSQL error region.
HeapTuple with_handler_key(const Attempt& a, HeapTuple answer, const char* handler_key) {
  for (int i = 0; i < a.desc->natts; ++i) {
    const Form_pg_attribute att = TupleDescAttr(a.desc, i);
    if (att->attisdropped || std::strcmp(NameStr(att->attname), "handler_key") != 0) continue;
    int column = i + 1;
    Datum value = CStringGetTextDatum(handler_key);
    bool is_null = false;
    return heap_modify_tuple_by_cols(answer, a.desc, 1, &column, &value, &is_null);
  }
  return answer;  // a type older than this library (before ALTER EXTENSION UPDATE)
}

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
  if (!protocol::fast_path_inserts(a.call_view) || !key_lock::try_take(a.lock)) return nullptr;
  // Under the key scope tenant the new record owns its key: claim it without waiting (the
  // general path answers a claim in flight, in_progress, or an owner, key_reused).
  if (a.owner_lock != 0 && !key_lock::try_take(a.owner_lock)) {
    key_lock::give_back(a.lock);
    return nullptr;
  }
  char secret[keys::kLeaseSecretDigits + 1];
  draw_secret(secret);
  const hash::Digest secret_hash = hash::sha256(std::string_view(secret, keys::kLeaseSecretDigits));
  Args row;
  row.add(call.value[kTenant]).add(call.value[kDigest]).add(call.value[kHash]).add(call.value[kCaller]);
  row.add(call.value[kResource]).add(call.value[kKey]).add(a.lease).add(a.ttl).add(TimestampTzGetDatum(a.now));
  row.add(call.value[kMutationType]).add(datum::bytea_datum(secret_hash));
  if (a.schema_has_key_scope) row.add(BoolGetDatum(a.owner_lock != 0));
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (execute(a.schema_has_key_scope ? insert_record : insert_record_before_key_scope, row, 1) != SPI_OK_INSERT_RETURNING) elog(ERROR, "pg_idempotency: could not insert the key's record");
  if (SPI_processed != 1) {
    SPI_finish();
    key_lock::give_back(a.lock);
    if (a.owner_lock != 0) key_lock::give_back(a.owner_lock);
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
  a.new_generation = DatumGetInt32(column(2, &is_null));
  HeapTuple answer = form_answer(a, result);
  SPI_finish();
  return answer;
}

// A record: the answers that take no lock (replay, mismatch, in_progress when not waiting), each
// with its audit row. nullptr for a decision that writes under the lock, or a wait.
HeapTuple answer_from_record(const Attempt& a, const Record& record) {
  const AcquireCall& call = a.call;
  protocol::RecordView view;
  view.status = status_of(datum::view(DatumGetTextPP(record.value[field::kStatus])));
  view.history = passed(record, field::kExpiresAt, a.now);
  view.lease_live = later_than(record, field::kLeaseExpiresAt, a.now);
  view.own_transaction = view.status == protocol::RecordStatus::InProgress && TransactionIdIsCurrentTransactionId(record.xmin);
  view.has_checkpoint = !record.null[field::kRecoveryPoint];
  view.same_payload = same_request(record, call);
  view.payload_pinned = !record.null[field::kPayloadPinned] && DatumGetBool(record.value[field::kPayloadPinned]);
  const protocol::Decision decision = protocol::decide(view);
  if (!protocol::fast_path_answers(a.call_view, decision, view.own_transaction)) return nullptr;
  const char* outcome = protocol::outcome_name(decision);
  Result result{a.desc, {}, {}};
  for (bool& n : result.nulls) n = true;
  result.set("outcome", CStringGetTextDatum(outcome));
  result.set("handle", CStringGetTextDatum(a.handle.c_str()));
  result.copy("generation", record, field::kGeneration);
  if (decision == protocol::Decision::Replay) {
    result.copy("order_id", record, field::kOrderId);
    if (!record.null[field::kResponseStatus]) result.set("response_status", Int32GetDatum(DatumGetInt16(record.value[field::kResponseStatus])));
    result.copy("response_headers", record, field::kResponseHeaders);
    result.copy("response_body", record, field::kResponseBody);
  } else if (decision == protocol::Decision::Busy) {
    result.set("retry_after", Int32GetDatum(gucs::retry_after_seconds));
  }
  // A read-only transaction (a standby) still gets its answer, without the audit row it cannot
  // write: a refusal executes nothing, so no mutation goes unlogged.
  if ((decision != protocol::Decision::Replay || gucs::audit_replays) && !XactReadOnly) {
    Args audit;
    audit.add(call.value[kTenant]).add(call.value[kDigest]).add(call.value[kKey]);
    audit.add(call.value[kCaller]).add(call.value[kResource]);
    if (record.null[field::kGeneration]) audit.add_null();
    else audit.add(record.value[field::kGeneration]);
    audit.add_null();  // attempt: a refusal runs none
    audit.add(call.value[kMutationType]).add(CStringGetTextDatum(outcome)).add(BoolGetDatum(false));
    if (record.null[field::kOrderId]) audit.add_null();
    else audit.add(record.value[field::kOrderId]);
    audit.add_null().add_null().add_null().add_null();  // handler response, local status, error, recovery point
    audit.add(record.null[field::kAttemptsInGeneration] ? Int32GetDatum(0) : record.value[field::kAttemptsInGeneration]);
    audit.add(TimestampTzGetDatum(a.now)).add_null();
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
    append_audit(audit);
    SPI_finish();
  }
  return form_answer(a, result);
}

}  // namespace

Datum acquire(const AcquireCall& call, FunctionCallInfo fcinfo) {
  const int64 lease = bounded_usecs(call, kLease, gucs::lease_timeout_seconds, gucs::max_lease_seconds);
  const int64 ttl = bounded_usecs(call, kTtl, gucs::default_ttl_seconds, gucs::max_ttl_seconds);
  protocol::FastCall view;
  view.enabled = gucs::fast_path;
  view.arguments_plain = view.enabled && lease != 0 && ttl != 0 && text_is(call, kOnBusy, kOnBusyModes) &&
                         text_is(call, kMutationType, kMutationTypes) && !call.null[kTenant] && !call.null[kDigest] &&
                         !call.null[kKey] && !call.null[kHash] && !call.null[kCaller] && !call.null[kResource];
  const bytea* digest_arg = view.arguments_plain ? pg::guarded([&] { return DatumGetByteaPP(call.value[kDigest]); }) : nullptr;
  view.arguments_plain = view.arguments_plain && VARSIZE_ANY_EXHDR(digest_arg) == sizeof(hash::Digest);
  if (!protocol::fast_path_takes(view)) return run_general(call);
  view.read_committed = XactIsoLevel == XACT_READ_COMMITTED;
  view.wait_mode = text_of(call, kOnBusy) == "wait";
  const std::string_view tenant = text_of(call, kTenant);
  hash::Digest digest;
  std::memcpy(digest.data(), VARDATA_ANY(digest_arg), digest.size());

  // The general path's order: its lease and TTL, the tenant, the arguments, then durability.
  pg::guarded([&] { require_tenant(call.value[kTenant]); });
  require_durable_store_now();
  const std::string plain_handle = keys::format_handle(tenant, digest);
  const int64 owner_lock = gucs::key_scope == 0 ? owner_lock_key(tenant, text_of(call, kKey)) : 0;
  Attempt attempt{call,
                  result_desc(fcinfo),
                  datum::interval_datum(lease),
                  datum::interval_datum(ttl),
                  plain_handle,
                  digest,
                  key_lock::of_digest(digest),
                  owner_lock,
                  false,
                  view,
                  CurrentMemoryContext,
                  0,
                  0};

  HeapTuple answer = pg::guarded([&]() -> HeapTuple {
    Record record;
    read_record(call.value[kTenant], call.value[kDigest], &record);
    attempt.schema_has_key_scope = record.has_key_scope;
    if (!record.has_key_scope) attempt.owner_lock = 0;  // a schema before 0.3.6: keys own nothing
    attempt.now = GetCurrentTimestamp();
    return record.found ? answer_from_record(attempt, record) : insert_new_record(attempt);  // nullptr: the general path decides
  });
  if (answer == nullptr) return run_general(call);
  if (attempt.new_generation > 0) {
    const std::string handler_key = keys::handler_key(digest, attempt.new_generation);
    answer = pg::guarded([&] { return with_handler_key(attempt, answer, handler_key.c_str()); });
  }
  return HeapTupleGetDatum(answer);
}

}  // namespace idem::hot
