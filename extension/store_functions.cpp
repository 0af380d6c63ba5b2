// Helpers of the key store that want C speed or catalog access: the advisory-lock key of a
// scoped digest, handle parsing, and the fail-closed durability check of acquire and complete.
#include <cstring>

#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/store_functions.hpp"

namespace idem {
namespace {

// The first 8 bytes of the SHA-256 scope digest. Two keys sharing a lock key only make one of them
// report in_progress needlessly (p = 2^-64 a pair); they never make a key execute twice.
Datum lock_key(FunctionCallInfo fcinfo) {
  const bytea* digest = PG_GETARG_BYTEA_PP(0);
  if (VARSIZE_ANY_EXHDR(digest) != 32) {
    throw Error(ErrorCode::ArgumentInvalid, "a scope digest is 32 bytes, got " + std::to_string(VARSIZE_ANY_EXHDR(digest)));
  }
  uint64 key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | static_cast<unsigned char>(VARDATA_ANY(digest)[i]);
  return Int64GetDatum(static_cast<int64>(key));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// A handle is "<tenant>:<64 lower-case hex digits>" (see idem._handle); the tenant is whatever
// precedes the last 65 characters, so it may itself contain ':'.
Datum handle_digest(FunctionCallInfo fcinfo) {
  const auto handle = datum::text_arg(fcinfo, 0);
  const auto refuse = [&] {
    return Error(ErrorCode::ArgumentInvalid,
                 (handle ? "'" + std::string(handle->substr(0, utf8_clip_length(handle->data(), handle->size(), 200))) + "'"
                        : std::string("NULL")) +
                     " is not a handle returned by idem.acquire",
                 "Pass the handle column of the acquire result unchanged.");
  };
  if (!handle || handle->size() < 66 || (*handle)[handle->size() - 65] != ':') throw refuse();
  hash::Digest digest{};
  const std::string_view hex = handle->substr(handle->size() - 64);
  for (std::size_t i = 0; i < digest.size(); ++i) {
    const int hi = hex_value(hex[2 * i]);
    const int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw refuse();
    digest[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return datum::bytea_datum(digest);
}

// A batch transaction that meets its own key again must see it as executing (in_progress),
// even once the lease has run out: only another transaction may take it over.
Datum written_by_current_transaction(FunctionCallInfo fcinfo) {
  return BoolGetDatum(TransactionIdIsCurrentTransactionId(DatumGetTransactionId(PG_GETARG_DATUM(0))));
}

bool setting_is(const char* name, const char* value) {
  const char* current = GetConfigOption(name, false, false);
  return current != nullptr && std::strcmp(current, value) == 0;
}

// Set by acquire/complete; checked again just before this transaction commits, because COMMIT
// uses the synchronous_commit in force at that moment (a SET LOCAL after complete counts).
bool wrote_records_in_transaction = false;

// Why fail closed: a response acknowledged to the client and then lost in a crash lets the
// client's retry execute the mutation a second time.
Datum require_durable_store(FunctionCallInfo fcinfo) {
  wrote_records_in_transaction = true;
  if (gucs::allow_non_atomic_store) PG_RETURN_VOID();
  const char* problem = nullptr;
  if (setting_is("fsync", "off")) {
    problem = "fsync is off for this server";
  } else if (setting_is("synchronous_commit", "off")) {
    problem = "synchronous_commit is off for this session or transaction";
  } else {
    const Oid ns = get_namespace_oid("idem", false);
    const Oid table = get_relname_relid("keys", ns);
    if (!OidIsValid(table) || get_rel_persistence(table) != RELPERSISTENCE_PERMANENT) {
      problem = "table idem.keys is not a permanent (WAL-logged) table";
    }
  }
  if (problem != nullptr) {
    throw Error(ErrorCode::NonAtomicStore,
                std::string(problem) + ": a completed response could be lost in a crash and its retry executed twice",
                "Turn fsync and synchronous_commit on (SET synchronous_commit = on) and keep idem.keys logged; "
                "tests may set idem.allow_non_atomic_store = on.");
  }
  PG_RETURN_VOID();
}

}  // namespace

// Called by PostgreSQL at every transaction event. Plain data only: it raises with ereport directly
// and nothing in it can throw a C++ exception.
void check_durability_at_commit(XactEvent event, void*) {
  const bool before_commit = event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PARALLEL_PRE_COMMIT ||
                             event == XACT_EVENT_PRE_PREPARE;
  if (!before_commit) {
    wrote_records_in_transaction = false;
    return;
  }
  if (!wrote_records_in_transaction || gucs::allow_non_atomic_store) return;
  wrote_records_in_transaction = false;
  if (setting_is("fsync", "off") || setting_is("synchronous_commit", "off")) {
    ereport(ERROR, (errcode(MAKE_SQLSTATE('I', 'K', '0', '0', '7')),
                    errmsg("ERR_NON_ATOMIC_IDEMPOTENCY_STORE: this transaction called idem.acquire, checkpoint or complete and "
                           "would commit with fsync or synchronous_commit off: a completed response could be lost in a crash "
                           "and its retry executed twice"),
                    errhint("Do not turn synchronous_commit off in a transaction that calls idem.acquire or idem.complete.")));
  }
}

}  // namespace idem

extern "C" {
PG_FUNCTION_INFO_V1(idem_lock_key);
Datum idem_lock_key(PG_FUNCTION_ARGS) { return idem::Invoke(idem::lock_key, fcinfo); }

PG_FUNCTION_INFO_V1(idem_handle_digest);
Datum idem_handle_digest(PG_FUNCTION_ARGS) { return idem::Invoke(idem::handle_digest, fcinfo); }

PG_FUNCTION_INFO_V1(idem_written_by_current_transaction);
Datum idem_written_by_current_transaction(PG_FUNCTION_ARGS) {
  return idem::Invoke(idem::written_by_current_transaction, fcinfo);
}

PG_FUNCTION_INFO_V1(idem_require_durable_store);
Datum idem_require_durable_store(PG_FUNCTION_ARGS) { return idem::Invoke(idem::require_durable_store, fcinfo); }
}
