// One DefineCustom*Variable per setting, as pg_cron does, all namespaced under idem.
#include "extension/gucs.hpp"

#include "extension/pg/postgres.hpp"

namespace idem::gucs {

int default_ttl_seconds = 24 * 60 * 60;
int lease_timeout_seconds = 30;
int retry_after_seconds = 2;
int key_min_length = 16;
int key_max_length = 255;  // Stripe's limit; core/keys/key_validation.hpp agrees
bool allow_non_atomic_store = false;
int wait_timeout_ms = 5000;
int max_lease_seconds = 60 * 60;
int max_ttl_seconds = 90 * 24 * 60 * 60;
int max_payload_bytes = 1024 * 1024;
int history_retention_seconds = 90 * 24 * 60 * 60;
bool audit_replays = true;
bool payload_members = true;
int min_audit_retention_seconds = 24 * 60 * 60;
bool outbox_notify = true;
int key_scope = 0;  // tenant
bool fast_path = true;
bool pending_record = true;

void define() {
  DefineCustomIntVariable("idem.default_ttl", "How long a resolved idempotency record is replayed.",
                          "After it, the same key starts a new generation.", &default_ttl_seconds,
                          24 * 60 * 60, 1, INT_MAX, PGC_USERSET, GUC_UNIT_S, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.lease_timeout", "How long an acquired key is held without a checkpoint.",
                          "After it, the next acquire resumes the mutation with a new attempt number.",
                          &lease_timeout_seconds, 30, 1, INT_MAX, PGC_USERSET, GUC_UNIT_S, nullptr, nullptr,
                          nullptr);
  DefineCustomIntVariable("idem.retry_after", "Retry-After, in seconds, returned with in_progress.", nullptr,
                          &retry_after_seconds, 2, 0, 3600, PGC_USERSET, GUC_UNIT_S, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.key_min_length", "Shortest idempotency key accepted.",
                          "Checked against idem.key_max_length at use, not here: settings load in any order.", &key_min_length,
                          16, 1, 1024, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.key_max_length", "Longest idempotency key accepted.", nullptr, &key_max_length,
                          255, 1, 1024, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomBoolVariable(
      "idem.allow_non_atomic_store",
      "TESTS ONLY: let acquire/complete run on a store that can lose acknowledged writes.",
      "With fsync or synchronous_commit off, a crash can lose a completed record and a retry executes twice.",
      &allow_non_atomic_store, false, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomBoolVariable(
      "idem.outbox_notify", "NOTIFY idem_outbox when a transaction that emitted outbox events commits.",
      "Wakes listening consumers at once. Off (consumers behind a pooler that cannot LISTEN) saves the "
      "commit-time NOTIFY; consumers then find events at their next poll.",
      &outbox_notify, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.wait_timeout", "Longest time acquire(on_busy => 'wait') polls a busy key.",
                          "Then it answers in_progress; only READ COMMITTED waits at all.", &wait_timeout_ms, 5000, 0,
                          60 * 60 * 1000, PGC_USERSET, GUC_UNIT_MS, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.max_lease", "Longest lease acquire grants.",
                          "A longer lease would let one crashed holder block its key for that long.", &max_lease_seconds,
                          60 * 60, 1, INT_MAX, PGC_SUSET, GUC_UNIT_S, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.max_ttl", "Longest time a resolved record is replayed.", nullptr, &max_ttl_seconds,
                          90 * 24 * 60 * 60, 1, INT_MAX, PGC_SUSET, GUC_UNIT_S, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.max_payload_bytes", "Largest payload fingerprinted (stored size).",
                          "Larger payloads are refused with ERR_PAYLOAD_TOO_LARGE before they are read.",
                          &max_payload_bytes, 1024 * 1024, 1, 256 * 1024 * 1024, PGC_SUSET, GUC_UNIT_BYTE, nullptr,
                          nullptr, nullptr);
  DefineCustomIntVariable("idem.history_retention", "How long a purged key's generation is remembered.",
                          "A key reused within it continues its generations; order ids and processor keys never repeat.",
                          &history_retention_seconds, 90 * 24 * 60 * 60, 1, INT_MAX, PGC_SUSET, GUC_UNIT_S, nullptr,
                          nullptr, nullptr);
  DefineCustomBoolVariable("idem.audit_replays", "Append an audit row (outcome replay) for every replay.",
                           "Off keeps replays read-only; mismatch and in_progress are always audited.", &audit_replays,
                           true, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomBoolVariable("idem.payload_members",
                           "Keep digests of a new key's payload members, to name the fields a reused key changed.",
                           "acquire with a jsonb or text payload; off (per transaction with SET LOCAL) keeps none, and a "
                           "mismatch names no field. The fingerprint form takes them from its caller.",
                           &payload_members, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("idem.min_audit_retention", "Shortest age idem.purge_audit may remove audit rows at.",
                          "An operator may age the trail out, not erase what is recent.", &min_audit_retention_seconds,
                          24 * 60 * 60, 0, INT_MAX, PGC_SUSET, GUC_UNIT_S, nullptr, nullptr, nullptr);
  // As PostgreSQL tests its planner with debug_parallel_query: make test runs the whole schedule
  // both ways, so the C fast path and the PL/pgSQL general path answer alike.
  DefineCustomBoolVariable("idem.fast_path", "TESTS: let acquire and complete take their C fast path.",
                           "Off sends every call to idem._acquire_general / idem._complete_general (slower, same answers).",
                           &fast_path, true, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomBoolVariable("idem.pending_record",
                           "Keep a new key's record in backend memory until its complete writes it once, resolved.",
                           "Off writes it in_progress at acquire and updates it at complete (two writes). A read of idem.keys "
                           "in the same transaction writes a pending record first; a COPY or TRUNCATE of idem.keys does not "
                           "(docs/hot-path.md).",
                           &pending_record, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  // Read by idem.keys.key_scope's default when a record is created.
  static const struct config_enum_entry kKeyScopes[] = {{"tenant", 0, false}, {"route", 1, false}, {nullptr, 0, false}};
  DefineCustomEnumVariable(
      "idem.key_scope", "Who a new key belongs to: the tenant (tenant), or the caller and route it was sent to (route).",
      "tenant: the same key from another caller or on another route is refused (ERR_IDEMPOTENCY_KEY_REUSED) while its "
      "record lasts. route: it is another request, as before 0.3.6; a client that reuses keys across routes then "
      "executes twice unseen.",
      &key_scope, 0, kKeyScopes, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  MarkGUCPrefixReserved("idem");
}

}  // namespace idem::gucs
