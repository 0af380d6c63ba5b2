// idem._acquire in C. The three calls a service makes all day run through kept plans: a new key
// (one read, the key's lock, one INSERT) and the answers that take no lock (replay, mismatch,
// in_progress, each with its audit row). Every other case -- an argument to refuse, a lock to
// wait for, a takeover, a resume, a new generation, a snapshot older than READ COMMITTED's --
// goes to idem._acquire_general, the PL/pgSQL reference, which decides from the start. The fast
// path hands over before it writes anything and holding nothing it took (docs/hot-path.md).
#include <cstring>
#include <optional>
#include <string>

#include "core/fingerprint.hpp"
#include "core/json/member_digests.hpp"
#include "core/keys/derived_ids.hpp"
#include "core/keys/handle.hpp"
#include "core/protocol/decision.hpp"
#include "core/protocol/fast_path.hpp"
#include "core/statements/hot_statements.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/citus/shard_route.hpp"
#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/jsonb_canonical.hpp"
#include "extension/hot_path/acquire.hpp"
#include "extension/hot_path/audit_append.hpp"
#include "extension/hot_path/kept_plan.hpp"
#include "extension/hot_path/pending_record.hpp"
#include "extension/hot_path/record_params.hpp"
#include "extension/hot_path/record_lookup.hpp"
#include "extension/hot_path/tenant_check.hpp"
#include "extension/key_lock.hpp"
#include "extension/store_functions.hpp"

namespace idem::hot {
namespace {

using namespace call_arg;

KeptPlan general_acquire{
    "SELECT idem._acquire_general($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    kAcquireArgs,
    {TEXTOID, BYTEAOID, TEXTOID, BYTEAOID, TEXTOID, TEXTOID, INTERVALOID, INTERVALOID, TEXTOID, TEXTOID, BYTEAOID},
    nullptr};
// A schema before 0.4.0 (until ALTER EXTENSION UPDATE): no member digests.
KeptPlan general_acquire_before_members{
    "SELECT idem._acquire_general($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    kAcquireArgs - 1,
    {TEXTOID, BYTEAOID, TEXTOID, BYTEAOID, TEXTOID, TEXTOID, INTERVALOID, INTERVALOID, TEXTOID, TEXTOID},
    nullptr};

// The new record's INSERT (core/statements/record_params.def, record_columns.def).
// key_scope_tenant: nothing is inserted while another record owns the key (read, not waited for:
// its owner may be writing it in an open transaction); the general path answers.
enum RecordReturned { kReturnedAttempt = 1, kReturnedGeneration, kReturnedLeaseExpiresAt };

const std::string kInsertRecordSql = statements::record_insert(statements::RecordSchema::kCurrent);
const std::string kInsertRecordBeforePayloadMembersSql = statements::record_insert(statements::RecordSchema::kBeforePayloadMembers);
const std::string kInsertRecordBeforeKeyScopeSql = statements::record_insert(statements::RecordSchema::kBeforeKeyScope);

KeptPlan insert_record = record_plan(kInsertRecordSql.c_str(), kRecordParams);

// The same on a schema of 0.3.6 (no idem.keys.payload_members) or before idem.keys.key_scope
// (keys own nothing), until ALTER EXTENSION UPDATE: the same types, of which SPI reads all but
// the last one or two.
KeptPlan insert_record_before_payload_members = record_plan(kInsertRecordBeforePayloadMembersSql.c_str(), kRecordParams - 1);
KeptPlan insert_record_before_key_scope = record_plan(kInsertRecordBeforeKeyScopeSql.c_str(), kRecordParams - 2);

// A pending record's check under the key's lock (pending_record.hpp): a record committed since the
// first read, or another owning the key, sends the call to the general path.
const std::string kPendingCheckSql = statements::pending_record_check();
KeptPlan pending_check = record_plan(kPendingCheckSql.c_str(), kRecordParams);
constexpr int kCheckedOwned = 4;  // after the three columns the record INSERT returns

// On Citus, the same INSERT into the tenant's shards (key_scope exists: Citus mode came after it).
std::string record_insert_on_shard(const statements::Tables& shards) {
  return statements::record_insert(statements::RecordSchema::kCurrent, shards);
}
KeptPlanPerTables insert_record_on_shard{record_insert_on_shard, insert_record};

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

std::string_view bytes_of(Datum bytea_datum);

// A jsonb or text payload's member digests, salted with the record's scope (idem.payload_members
// off: none). Computed for a new record or a mismatch only: a replay never pays for them.
void need_members(AcquireCall& call) {
  if (!call.members_pending) return;
  call.members_pending = false;
  if (!gucs::payload_members) return;
  hash::Digest scope;
  const std::string_view digest = bytes_of(call.value[call_arg::kDigest]);
  if (digest.size() != scope.size()) return;
  std::memcpy(scope.data(), digest.data(), scope.size());
  const hash::Digest salt = json::member_salt(scope);
  const std::string members =
      call.payload_is_jsonb
          ? jsonb::member_digests(pg::guarded([&] { return DatumGetJsonbP(call.payload); }), {}, salt)
          : fingerprint_text_with_members(datum::view(pg::guarded([&] { return DatumGetTextPP(call.payload); })), {}, salt).members;
  call.set(call_arg::kMembers, datum::bytea_datum(members), false);
}

Datum run_general(AcquireCall& call) {
  KeptPlan& plan = pg::call(keys_have_payload_members_unsafe) ? general_acquire : general_acquire_before_members;
  if (plan.nargs == kAcquireArgs) need_members(call);
  Args args;
  for (int i = 0; i < plan.nargs; ++i) args.add(call.null[i] ? Value{} : Value::of(call.value[i]));
  spi_connect();
  if (execute(plan, args, 1, SPI_OK_SELECT, "idem._acquire_general failed") != 1) {
    pg::raise_internal("pg_idempotency: idem._acquire_general failed");
  }
  const Datum result = pg::call(SPI_datumTransfer, column(1).datum, false, -1);  // into the caller's context
  spi_finish();
  return result;
}

// The idem.acquire_result being built, by attribute name (an older type may lack some).
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
    char message[128];
    snprintf(message, sizeof message, "pg_idempotency: idem.acquire_result has no attribute %s", name);
    pg::raise_internal(message);
  }
  void copy(const char* name, const Record& record, field::RecordField f) {
    if (!record.null[f]) set(name, record.value[f]);
  }
};

// Plain C: called through pg::call.
TupleDesc result_desc_unsafe(FunctionCallInfo fcinfo) {
  TupleDesc desc = nullptr;
  if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE || desc->natts > 16) {
    elog(ERROR, "pg_idempotency: idem._acquire must return idem.acquire_result");
  }
  return BlessTupleDesc(desc);
}

// 128 bits from OpenSSL's generator, drawn 256 secrets at a time: each RAND_bytes call pays for
// the generator's locking and set-up, a visible share of acquire's time for a new key when drawn
// one by one. A backend fills its pool at its first new key; the postmaster never does, so no
// two processes share one. A secret's bytes are wiped from the pool as they are handed out.
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
  const bytea* x = pg::guarded([&] { return DatumGetByteaPP(a); });
  const bytea* y = pg::guarded([&] { return DatumGetByteaPP(b); });
  return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) && std::memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
}

std::string_view bytes_of(Datum bytea_datum) {
  const bytea* b = pg::guarded([&] { return DatumGetByteaPP(bytea_datum); });
  return {VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b)};
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
  AcquireCall& call;
  TupleDesc desc;              // idem.acquire_result
  Datum lease, ttl;            // intervals, already bounded
  const std::string& handle;   // the plain handle "<tenant>:<digest hex>"
  const hash::Digest& digest;  // the scope digest
  int64 lock;                  // the key's lock
  int64 owner_lock;            // the (tenant, key) owner's lock; 0 under the key scope route
  bool schema_has_key_scope;   // idem.keys.key_scope exists
  bool schema_has_members;     // idem.keys.payload_members exists (0.4.0)
  protocol::FastCall call_view;  // which decisions the fast path answers (core/protocol/fast_path.hpp)
  MemoryContext caller_context;  // where the answer must live (SPI's context ends with SPI_finish)
  const citus::ShardRoute* shards;  // on Citus, the tenant's shards here; nullptr on one node
  TimestampTz now;
  mutable int32 new_generation;  // set when a new record was inserted
};

// The processor key goes with the lease and never later: a holder that asked for it after its
// lease was taken over and its record began a new generation got the next request's key.
HeapTuple with_handler_key(const Attempt& a, HeapTuple answer, const std::string& handler_key) {
  for (int i = 0; i < a.desc->natts; ++i) {
    const Form_pg_attribute att = TupleDescAttr(a.desc, i);
    if (att->attisdropped || std::strcmp(NameStr(att->attname), "handler_key") != 0) continue;
    int column = i + 1;
    Datum value = datum::text_datum(handler_key);
    bool is_null = false;
    return pg::call(heap_modify_tuple_by_cols, answer, a.desc, 1, &column, &value, &is_null);
  }
  return answer;  // a type older than this library (before ALTER EXTENSION UPDATE)
}

HeapTuple form_answer(const Attempt& a, Result& result) {
  const MemoryContext spi_context = MemoryContextSwitchTo(a.caller_context);
  HeapTuple tuple = pg::call(heap_form_tuple, a.desc, &result.values[0], &result.nulls[0]);
  MemoryContextSwitchTo(spi_context);
  return tuple;
}

// No record: take the key's lock without waiting and insert generation high-water + 1. nullptr
// when the general path must decide: not READ COMMITTED (an older snapshot must first prove no
// purge it cannot see retired the key), the lock taken by another transaction (refuse or wait,
// there), or a record committed after our read (the lock is given back first).
HeapTuple insert_new_record(const Attempt& a) {
  AcquireCall& call = a.call;
  if (!protocol::fast_path_inserts(a.call_view)) return nullptr;
  need_members(call);  // before any lock: nothing taken stays held if it fails
  if (!key_lock::try_take(a.lock)) return nullptr;
  // Under the key scope tenant the new record owns its key: claim it without waiting (the
  // general path answers a claim in flight, in_progress, or an owner, key_reused).
  if (a.owner_lock != 0 && !key_lock::try_take(a.owner_lock)) {
    key_lock::give_back(a.lock);
    return nullptr;
  }
  char secret[keys::kLeaseSecretDigits + 1];
  draw_secret(secret);
  const hash::Digest secret_hash = hash::sha256(std::string_view(secret, keys::kLeaseSecretDigits));
  RecordParams p{};
  p.tenant_id = call.value[kTenant];
  p.scope_digest = call.value[kDigest];
  p.payload_hash = call.value[kHash];
  p.caller_id = call.value[kCaller];
  p.resource = call.value[kResource];
  p.client_key = call.value[kKey];
  p.lease_interval = a.lease;
  p.ttl = a.ttl;
  p.now = TimestampTzGetDatum(a.now);
  p.mutation_type = call.value[kMutationType];
  p.lease_secret_hash = datum::bytea_datum(secret_hash);
  p.key_scope_tenant = BoolGetDatum(a.owner_lock != 0);
  p.payload_members = call.value[call_arg::kMembers];
  // One node, this library's schema: the record is kept pending, written once by its complete.
  const bool keep_pending = a.shards == nullptr && a.schema_has_members && pending::may_keep();
  KeptPlan& plan = keep_pending                ? pending_check
                   : a.shards != nullptr        ? insert_record_on_shard.of(a.shards->tables)
                   : a.schema_has_members   ? insert_record
                   : a.schema_has_key_scope ? insert_record_before_payload_members
                                            : insert_record_before_key_scope;
  const Args row = args_of(p, plan.nargs, call.null[call_arg::kMembers]);
  spi_connect();
  const bool inserted =
      keep_pending ? execute(plan, row, 1, SPI_OK_SELECT, "could not check the key's record") == 1 && !DatumGetBool(column(kCheckedOwned).datum)
                   : execute(plan, row, 1, SPI_OK_INSERT_RETURNING, "could not insert the key's record") == 1;
  if (!inserted) {
    spi_finish();
    key_lock::give_back(a.lock);
    if (a.owner_lock != 0) key_lock::give_back(a.owner_lock);
    return nullptr;
  }
  const Datum generation = column(kReturnedGeneration).datum;
  if (keep_pending) pending::keep(p, call.null[call_arg::kMembers], DatumGetInt64(column(kReturnedAttempt).datum), DatumGetInt32(generation));
  Result result{a.desc, {}, {}};
  for (bool& n : result.nulls) n = true;
  result.set("outcome", datum::text_datum("acquired"));
  result.set("attempt", column(kReturnedAttempt).datum);
  result.set("generation", generation);
  result.set("lease_expires_at", column(kReturnedLeaseExpiresAt).datum);
  // Only the holder learns the secret; the record keeps its SHA-256.
  std::string handle;
  handle.reserve(a.handle.size() + 1 + keys::kLeaseSecretDigits);  // no copy of the secret left behind by a growth
  handle.append(a.handle).append(":").append(secret, keys::kLeaseSecretDigits);
  result.set("handle", datum::text_datum(handle));
  explicit_bzero(handle.data(), handle.size());
  a.new_generation = DatumGetInt32(generation);
  HeapTuple answer = form_answer(a, result);
  spi_finish();
  return answer;
}

// A record: the answers that take no lock (replay, mismatch, in_progress when not waiting), each
// with its audit row. nullptr for a decision that writes under the lock, or a wait.
HeapTuple answer_from_record(const Attempt& a, const Record& record) {
  AcquireCall& call = a.call;
  protocol::RecordView view;
  view.status = status_of(datum::view(pg::guarded([&] { return DatumGetTextPP(record.value[field::kStatus]); })));
  view.history = passed(record, field::kExpiresAt, a.now);
  view.lease_live = later_than(record, field::kLeaseExpiresAt, a.now);
  view.own_transaction = view.status == protocol::RecordStatus::InProgress && pg::call(TransactionIdIsCurrentTransactionId, record.xmin);
  view.has_checkpoint = !record.null[field::kRecoveryPoint];
  view.same_payload = same_request(record, call);
  view.payload_pinned = !record.null[field::kPayloadPinned] && DatumGetBool(record.value[field::kPayloadPinned]);
  const protocol::Decision decision = protocol::decide(view);
  if (!protocol::fast_path_answers(a.call_view, decision, view.own_transaction)) return nullptr;
  const char* outcome = protocol::outcome_name(decision);
  Result result{a.desc, {}, {}};
  for (bool& n : result.nulls) n = true;
  result.set("outcome", datum::text_datum(outcome));
  result.set("handle", datum::text_datum(a.handle));
  result.copy("generation", record, field::kGeneration);
  if (decision == protocol::Decision::Replay) {
    result.copy("order_id", record, field::kOrderId);
    if (!record.null[field::kResponseStatus]) result.set("response_status", Int32GetDatum(DatumGetInt16(record.value[field::kResponseStatus])));
    result.copy("response_headers", record, field::kResponseHeaders);
    result.copy("response_body", record, field::kResponseBody);
  } else if (decision == protocol::Decision::Busy) {
    result.set("retry_after", Int32GetDatum(gucs::retry_after_seconds));
  } else if (decision == protocol::Decision::Mismatch && !record.null[field::kPayloadMembers] &&
             (need_members(call), !call.null[call_arg::kMembers])) {
    // Which members differ from the key's first request: pointers only, from both digest sets.
    const auto differ = json::differing_members(bytes_of(record.value[field::kPayloadMembers]), bytes_of(call.value[call_arg::kMembers]));
    if (differ && !differ->empty()) result.set("key_reuse_differs", datum::text_array_datum(*differ));
  }
  // A read-only transaction (a standby) still gets its answer, without the audit row it cannot
  // write: a refusal executes nothing, so no mutation goes unlogged.
  if ((decision != protocol::Decision::Replay || gucs::audit_replays) && !XactReadOnly) {
    const auto copied = [&](field::RecordField f) { return record.null[f] ? Value{} : Value::of(record.value[f]); };
    AuditRow audit;  // attempt, handler response, local status, error, recovery point: a refusal runs none
    audit.tenant_id = Value::of(call.value[kTenant]);
    audit.scope_digest = Value::of(call.value[kDigest]);
    audit.client_key = Value::of(call.value[kKey]);
    audit.caller_id = Value::of(call.value[kCaller]);
    audit.resource = Value::of(call.value[kResource]);
    audit.generation = copied(field::kGeneration);
    audit.mutation_type = Value::of(call.value[kMutationType]);
    audit.outcome = Value::of(datum::text_datum(outcome));
    audit.handler_called = Value::of(BoolGetDatum(false));
    audit.order_id = copied(field::kOrderId);
    audit.retry_count = Value::of(record.null[field::kAttemptsInGeneration] ? Int32GetDatum(0) : record.value[field::kAttemptsInGeneration]);
    audit.attempted_at = Value::of(TimestampTzGetDatum(a.now));
    spi_connect();
    append_audit(audit, a.shards == nullptr ? nullptr : &a.shards->tables);
    spi_finish();
  }
  return form_answer(a, result);
}

}  // namespace

Datum acquire(AcquireCall& call, FunctionCallInfo fcinfo) {
  // Whatever this call reads of idem.keys (the fast path's own read takes no executor), it sees
  // the records this backend keeps pending: a second acquire of a key in its transaction too.
  if (pending::any()) pending::write_all();
  const int64 lease = bounded_usecs(call, kLease, gucs::lease_timeout_seconds, gucs::max_lease_seconds);
  const int64 ttl = bounded_usecs(call, kTtl, gucs::default_ttl_seconds, gucs::max_ttl_seconds);
  // On Citus the tables here are shells: the fast path works on the tenant's shards, which must
  // be on this node (its key locks are this node's); the general path's SQL, which Citus routes.
  std::optional<citus::ShardRoute> shards;
  if (citus::distributed()) {
    if (call.null[kTenant]) return run_general(call);  // which names the refusal
    shards = citus::local_route(call.value[kTenant]);
  }
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
  require_tenant(call.value[kTenant]);
  require_durable_store_now();
  const std::string plain_handle = keys::format_handle(tenant, digest);
  const int64 owner_lock = gucs::key_scope == 0 ? owner_lock_key(tenant, text_of(call, kKey)) : 0;
  Attempt attempt{call,
                  pg::call(result_desc_unsafe, fcinfo),
                  datum::interval_datum(lease),
                  datum::interval_datum(ttl),
                  plain_handle,
                  digest,
                  key_lock::of_digest(digest),
                  owner_lock,
                  false,
                  false,
                  view,
                  CurrentMemoryContext,
                  shards ? &*shards : nullptr,
                  0,
                  0};

  Record record;
  pg::call(read_record_unsafe, shards ? shards->keys : InvalidOid, shards ? shards->keys_pkey : InvalidOid,
           call.value[kTenant], call.value[kDigest], &record);
  attempt.schema_has_key_scope = record.has_key_scope;
  attempt.schema_has_members = record.has_payload_members;
  if (!record.has_key_scope) attempt.owner_lock = 0;  // an older schema: keys own nothing
  attempt.now = GetCurrentTimestamp();
  HeapTuple answer = record.found ? answer_from_record(attempt, record) : insert_new_record(attempt);
  if (answer == nullptr) return run_general(call);  // the general path decides
  if (attempt.new_generation > 0) answer = with_handler_key(attempt, answer, keys::handler_key(digest, attempt.new_generation));
  return HeapTupleGetDatum(answer);
}

}  // namespace idem::hot
