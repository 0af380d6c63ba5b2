// SQL functions of the key family: validate_key, scope_digest, handles, and the error-boundary probe.
#include "core/keys/handle.hpp"
#include "core/keys/key_validation.hpp"
#include "core/keys/scope_digest.hpp"
#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"

namespace idem {
namespace {

keys::KeyLimits key_limits() {
  if (gucs::key_min_length > gucs::key_max_length) {
    throw Error(ErrorCode::ArgumentInvalid,
                "server misconfiguration: idem.key_min_length (" + std::to_string(gucs::key_min_length) +
                    ") exceeds idem.key_max_length (" + std::to_string(gucs::key_max_length) + ")",
                "An operator must fix these settings; no key can be valid until then.");
  }
  return {static_cast<std::size_t>(gucs::key_min_length), static_cast<std::size_t>(gucs::key_max_length)};
}

std::string_view required_text(FunctionCallInfo fcinfo, int n, const char* what) {
  auto value = datum::text_arg(fcinfo, n);
  if (!value) throw Error(ErrorCode::ArgumentInvalid, std::string(what) + " must not be NULL");
  return *value;
}

Datum validate_key(FunctionCallInfo fcinfo) {
  keys::validate_key(datum::text_arg(fcinfo, 0), key_limits());
  PG_RETURN_VOID();
}

Datum scope_digest(FunctionCallInfo fcinfo) {
  const std::string_view tenant = required_text(fcinfo, 0, "tenant");
  const std::string_view caller = required_text(fcinfo, 1, "caller");
  const std::string_view resource = required_text(fcinfo, 2, "resource");
  const auto key = datum::text_arg(fcinfo, 3);
  keys::validate_scope_part(tenant, "tenant", keys::kMaxTenantBytes, false);
  keys::validate_scope_part(caller, "caller", keys::kMaxScopePartBytes, true);
  keys::validate_scope_part(resource, "resource", keys::kMaxScopePartBytes, true);
  keys::validate_key(key, key_limits());
  return datum::bytea_datum(keys::scope_digest(tenant, caller, resource, *key));
}

Datum handle(FunctionCallInfo fcinfo) {
  const std::string_view tenant = required_text(fcinfo, 0, "tenant");
  return datum::text_datum(keys::format_handle(tenant, datum::digest_arg(fcinfo, 1, "scope_digest")));
}

// Both halves of a handle; ERR_ARGUMENT_INVALID for anything acquire did not return.
keys::Handle parsed_handle(FunctionCallInfo fcinfo) {
  const auto text = datum::text_arg(fcinfo, 0);
  if (text) {
    if (auto parsed = keys::parse_handle(*text)) return *parsed;
  }
  // What follows the last ':' may be a holder's secret (a handle mangled on its way): the
  // message, which reaches logs, shows only what comes before it.
  std::string shown = "NULL";
  if (text) {
    const auto colon = text->rfind(':');
    const std::string_view kept = colon == std::string_view::npos ? *text : text->substr(0, colon);
    shown = "'" + std::string(kept.substr(0, utf8_clip_length(kept.data(), kept.size(), 200))) +
            (colon == std::string_view::npos ? "'" : ":...'");
  }
  throw Error(ErrorCode::ArgumentInvalid, shown + " is not a handle returned by idem.acquire",
              "Pass the handle column of the acquire result unchanged.");
}

Datum handle_tenant(FunctionCallInfo fcinfo) { return datum::text_datum(parsed_handle(fcinfo).tenant); }

Datum handle_digest(FunctionCallInfo fcinfo) { return datum::bytea_datum(parsed_handle(fcinfo).scope_digest); }

// The lease secret acquire appended to a holder's handle; NULL for a plain handle.
Datum handle_secret(FunctionCallInfo fcinfo) {
  const keys::Handle h = parsed_handle(fcinfo);
  if (h.lease_secret.empty()) {
    fcinfo->isnull = true;
    return Datum(0);
  }
  return datum::text_datum(h.lease_secret);
}

// Proves the boundary: a C++ exception thrown deep in a function whose frames own heap memory
// surfaces as a clean SQL error with our SQLSTATE, and the backend carries on.
Datum raise_cpp_exception(FunctionCallInfo fcinfo) {
  const auto kind = required_text(fcinfo, 0, "kind");
  std::vector<std::string> live_objects(100, std::string(1000, 'x'));  // must be destroyed, not leaked
  if (kind == "idem") throw Error(ErrorCode::ArgumentInvalid, "boundary probe: idem::Error thrown with " + std::to_string(live_objects.size()) + " live objects");
  if (kind == "std") throw std::runtime_error("boundary probe: std::runtime_error");
  if (kind == "bad_alloc") throw std::bad_alloc();
  if (kind == "pg") {
    // A PostgreSQL error raised while C++ objects are alive: caught, carried, re-raised as it was.
    pg::guarded([] { ereport(ERROR, (errcode(ERRCODE_DIVISION_BY_ZERO), errmsg("boundary probe: PostgreSQL error"))); });
  }
  if (kind == "int") throw 42;
  return Int32GetDatum(static_cast<int32>(live_objects.size()));
}

}  // namespace
}  // namespace idem

IDEM_SQL_FUNCTION(idem_validate_key, idem::validate_key)

IDEM_SQL_FUNCTION(idem_scope_digest, idem::scope_digest)

IDEM_SQL_FUNCTION(idem_handle, idem::handle)

IDEM_SQL_FUNCTION(idem_handle_tenant, idem::handle_tenant)

IDEM_SQL_FUNCTION(idem_handle_digest, idem::handle_digest)

IDEM_SQL_FUNCTION(idem_handle_secret, idem::handle_secret)

IDEM_SQL_FUNCTION(idem_raise_cpp_exception, idem::raise_cpp_exception)
