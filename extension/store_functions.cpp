// Helpers of the key store that want C speed or catalog access: the advisory-lock key of a
// scoped digest, settings, and the fail-closed durability check (at call time and at COMMIT).
#include <cstring>

#include "extension/boundary.hpp"
#include "extension/database_encoding.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/key_lock.hpp"
#include "extension/store_functions.hpp"

namespace idem {
namespace {

Datum lock_key(FunctionCallInfo fcinfo) {
  return Int64GetDatum(key_lock::of_digest(datum::digest_arg(fcinfo, 0, "scope_digest")));
}

// A batch transaction that meets its own key again must see it as executing (in_progress),
// even once the lease has run out: only another transaction may take it over.
Datum written_by_current_transaction(FunctionCallInfo fcinfo) {
  return BoolGetDatum(TransactionIdIsCurrentTransactionId(DatumGetTransactionId(PG_GETARG_DATUM(0))));
}

bool setting_is(const char* name, const char* value) {
  const char* current = pg::call(GetConfigOption, name, false, false);
  return current != nullptr && std::strcmp(current, value) == 0;
}

// The setting that makes a commit non-durable right now, or nullptr. Read at call time and again
// at commit time, since COMMIT uses the value in force when it runs.
const char* unsafe_setting() {
  if (setting_is("fsync", "off")) return "fsync is off for this server";
  if (setting_is("synchronous_commit", "off")) return "synchronous_commit is off for this session or transaction";
  return nullptr;
}

constexpr const char* kConsequence =
    ": a completed response could be lost in a crash and its retry executed twice";
constexpr const char* kRemedy =
    "Turn fsync and synchronous_commit on (never off in a transaction that calls idem.acquire, checkpoint or "
    "complete) and keep idem.keys logged; tests may set idem.allow_non_atomic_store = on.";

// Plain C: called through pg::call.
bool keys_table_permanent_unsafe() {
  const Oid table = get_relname_relid("keys", get_namespace_oid("idem", false));
  return OidIsValid(table) && get_rel_persistence(table) == RELPERSISTENCE_PERMANENT;
}

// Set by acquire/complete; checked again just before this transaction commits, because COMMIT
// uses the synchronous_commit in force at that moment (a SET LOCAL after complete counts).
bool wrote_records_in_transaction = false;

Datum require_durable_store(FunctionCallInfo) {
  require_durable_store_now();
  PG_RETURN_VOID();
}

Datum retry_after(FunctionCallInfo) { return Int32GetDatum(gucs::retry_after_seconds); }

}  // namespace

// Why fail closed: a response acknowledged to the client and then lost in a crash lets the
// client's retry execute the mutation a second time.
void require_durable_store_now() {
  require_utf8_database();
  wrote_records_in_transaction = true;
  if (gucs::allow_non_atomic_store) return;
  const char* problem = unsafe_setting();
  if (problem == nullptr) {
    const bool permanent = pg::call(keys_table_permanent_unsafe);
    if (!permanent) problem = "table idem.keys is not a permanent (WAL-logged) table";
  }
  if (problem != nullptr) {
    throw Error(ErrorCode::NonAtomicStore, std::string(problem) + kConsequence, kRemedy);
  }
}

// Called by PostgreSQL at every transaction event. No C++ object lives here: the refusal goes
// through the boundary's own raise, from plain data.
void check_durability_at_commit(XactEvent event, void*) {
  const bool before_commit = event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PARALLEL_PRE_COMMIT ||
                             event == XACT_EVENT_PRE_PREPARE;
  if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT || event == XACT_EVENT_PREPARE ||
      event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT) {
    reset_audit_purge();
  }
  if (!before_commit) {
    wrote_records_in_transaction = false;
    return;
  }
  if (!wrote_records_in_transaction || gucs::allow_non_atomic_store) return;
  wrote_records_in_transaction = false;
  const char* problem = unsafe_setting();
  if (problem == nullptr) return;
  boundary_detail::Failure failure;
  boundary_detail::copy_text(failure.sqlstate, sizeof failure.sqlstate, error_sqlstate(ErrorCode::NonAtomicStore));
  snprintf(failure.message, sizeof failure.message, "%s: at COMMIT of a transaction that called idem.acquire, checkpoint or complete, %s%s",
           error_name(ErrorCode::NonAtomicStore), problem, kConsequence);
  boundary_detail::copy_text(failure.hint, sizeof failure.hint, kRemedy);
  boundary_detail::raise(failure);
}

}  // namespace idem

IDEM_SQL_FUNCTION(idem_lock_key, idem::lock_key)

IDEM_SQL_FUNCTION(idem_retry_after, idem::retry_after)

IDEM_SQL_FUNCTION(idem_written_by_current_transaction, idem::written_by_current_transaction)

IDEM_SQL_FUNCTION(idem_require_durable_store, idem::require_durable_store)
