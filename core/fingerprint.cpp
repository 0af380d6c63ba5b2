// One place composes the fingerprint, so the backend and the client cannot drift apart.
#include "core/fingerprint.hpp"

#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "core/json/pointer.hpp"

namespace idem {

Fingerprint fingerprint(json::Value doc, const std::vector<std::string>& exclude) {
  if (!exclude.empty()) json::remove_pointers(doc, exclude);
  json::require_exact_numbers(doc);
  return {hash::sha256(json::canonicalize(doc)), kFingerprintScheme};
}

Fingerprint fingerprint_text(std::string_view json_text, const std::vector<std::string>& exclude) {
  return fingerprint(json::parse_strict(json_text), exclude);
}

}  // namespace idem
