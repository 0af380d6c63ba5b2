// One place composes the fingerprint, so the backend and the client cannot drift apart.
#include "core/fingerprint.hpp"

#include "core/json/canonical.hpp"
#include "core/json/member_digests.hpp"
#include "core/json/parser.hpp"
#include "core/json/pointer.hpp"

namespace idem {

Fingerprint fingerprint(json::Value doc, const std::vector<std::string>& exclude) {
  if (!exclude.empty()) json::remove_pointers(doc, exclude);
  json::require_exact_numbers(doc);
  return {hash::sha256(json::canonicalize(doc)), kFingerprintScheme};
}

// One pass from text to canonical bytes (json::canonicalize_text), no Value in between.
Fingerprint fingerprint_text(std::string_view json_text, const std::vector<std::string>& exclude) {
  Fingerprint result{{}, kFingerprintScheme};
  json::detail::with_canonical_text(json_text, exclude,
                                    [&result](std::string_view bytes) { result.hash = hash::sha256(bytes); });
  return result;
}

FingerprintWithMembers fingerprint_text_with_members(std::string_view json_text, const std::vector<std::string>& exclude,
                                                     const hash::Digest& salt) {
  FingerprintWithMembers result{{{}, kFingerprintScheme}, {}};
  json::detail::with_canonical_text(json_text, exclude, [&](std::string_view bytes) {
    result.fingerprint.hash = hash::sha256(bytes);
    result.members = json::member_digests(bytes, salt);
  });
  return result;
}

}  // namespace idem
