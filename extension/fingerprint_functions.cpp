// SQL functions of the fingerprint family: canonical_json, payload_hash, fingerprint_scheme.
#include "core/fingerprint.hpp"
#include "core/json/member_digests.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "extension/boundary.hpp"
#include "extension/database_encoding.hpp"
#include "extension/datum_convert.hpp"
#include "extension/gucs.hpp"
#include "extension/jsonb_canonical.hpp"
#include "extension/jsonb_events.hpp"

namespace idem {
namespace {

// Refuses a payload over idem.max_payload_bytes before reading it (toast_raw_datum_size reads
// only the header), and any payload in a database whose text is not UTF-8. Why a bound: C++
// memory escapes PostgreSQL's accounting, and work on a huge payload would hold the backend.
void check_payload(FunctionCallInfo fcinfo, int n) {
  require_utf8_database();
  const Size bytes = toast_raw_datum_size(PG_GETARG_DATUM(n)) - VARHDRSZ;
  if (bytes <= static_cast<Size>(gucs::max_payload_bytes)) return;
  throw Error(ErrorCode::PayloadTooLarge,
              "payload of " + std::to_string(bytes) + " bytes exceeds idem.max_payload_bytes (" +
                  std::to_string(gucs::max_payload_bytes) + " bytes)",
              "Fingerprint a smaller document, or exclude bulky members from the request body.");
}

// The tree path: the walk into events, then a Value. canonical_json(jsonb) uses it, and
// idem_payload_hash_jsonb_tree keeps the fingerprint's old path for the differential test.
json::Value jsonb_arg(FunctionCallInfo fcinfo, int n) {
  check_payload(fcinfo, n);
  // Detoast and walk first (PostgreSQL only), then build the C++ tree.
  Jsonb* doc = pg::guarded([&] { return PG_GETARG_JSONB_P(n); });
  const jsonb::Events events = pg::call(jsonb::collect, doc);
  return jsonb::build(events);
}

json::Value strict_text_arg(FunctionCallInfo fcinfo, int n) {
  check_payload(fcinfo, n);
  return json::parse_strict(*datum::text_arg(fcinfo, n));
}

Datum canonical_json_text(FunctionCallInfo fcinfo) {
  return datum::text_datum(json::canonicalize(strict_text_arg(fcinfo, 0)));
}

Datum canonical_json_jsonb(FunctionCallInfo fcinfo) {
  return datum::text_datum(json::canonicalize(jsonb_arg(fcinfo, 0)));
}

Datum payload_hash_jsonb(FunctionCallInfo fcinfo) {
  auto exclude = datum::text_array_arg(fcinfo, 1, "exclude");
  check_payload(fcinfo, 0);
  const Jsonb* doc = pg::guarded([&] { return PG_GETARG_JSONB_P(0); });
  // One walk of the container into canonical bytes (jsonb_canonical.hpp): the same bytes, hash
  // and refusals as payload_hash_jsonb_tree.
  return datum::bytea_datum(jsonb::fingerprint(doc, exclude).hash);
}

// Not in the extension's SQL: regress/sql/fingerprint_jsonb_one_pass.sql declares it to compare.
Datum payload_hash_jsonb_tree(FunctionCallInfo fcinfo) {
  auto exclude = datum::text_array_arg(fcinfo, 1, "exclude");
  return datum::bytea_datum(fingerprint(jsonb_arg(fcinfo, 0), exclude).hash);
}

Datum payload_hash_text(FunctionCallInfo fcinfo) {
  // Detoast the payload before any C++ object lives in this frame (text_arg may elog).
  check_payload(fcinfo, 0);
  const std::string_view payload = *datum::text_arg(fcinfo, 0);
  auto exclude = datum::text_array_arg(fcinfo, 1, "exclude");
  // One pass from text to canonical bytes (the same bytes and refusals as parse_strict + fingerprint).
  return datum::bytea_datum(fingerprint_text(payload, exclude).hash);
}

Datum fingerprint_scheme(FunctionCallInfo) { return Int32GetDatum(kFingerprintScheme); }

// idem._payload_differs(stored, sent): the JSON pointers two member-digest sets disagree on;
// NULL when either is not one (STRICT: NULL when either is NULL) or none differ.
Datum payload_differs(FunctionCallInfo fcinfo) {
  const bytea* a = pg::guarded([&] { return PG_GETARG_BYTEA_PP(0); });
  const bytea* b = pg::guarded([&] { return PG_GETARG_BYTEA_PP(1); });
  const auto differ = json::differing_members(std::string_view(VARDATA_ANY(a), VARSIZE_ANY_EXHDR(a)),
                                              std::string_view(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b)));
  if (!differ || differ->empty()) {
    fcinfo->isnull = true;
    return Datum(0);
  }
  return datum::text_array_datum(*differ);
}

}  // namespace
}  // namespace idem

IDEM_SQL_FUNCTION(idem_canonical_json_text, idem::canonical_json_text)

IDEM_SQL_FUNCTION(idem_canonical_json_jsonb, idem::canonical_json_jsonb)

IDEM_SQL_FUNCTION(idem_payload_hash_jsonb, idem::payload_hash_jsonb)

IDEM_SQL_FUNCTION(idem_payload_hash_jsonb_tree, idem::payload_hash_jsonb_tree)

IDEM_SQL_FUNCTION(idem_payload_hash_text, idem::payload_hash_text)

IDEM_SQL_FUNCTION(idem_fingerprint_scheme, idem::fingerprint_scheme)

IDEM_SQL_FUNCTION(idem_payload_differs, idem::payload_differs)
