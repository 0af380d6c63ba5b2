// Payload fingerprints: SHA-256 of the RFC 8785 form of the payload minus excluded members.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/hash/sha256.hpp"
#include "core/json/value.hpp"

namespace idem {

// The fingerprint scheme stored on every record. Scheme 1 = RFC 8785 + SHA-256, numbers that a
// double cannot hold exactly refused. Any change to canonical output needs a new number (the
// golden vectors in tests/golden/ fail the build with ERR_BREAKING_IDEMPOTENCY_DRIFT otherwise).
inline constexpr int kFingerprintScheme = 1;

struct Fingerprint {
  hash::Digest hash;
  int scheme;
};

// Removes `exclude` (RFC 6901 pointers), refuses inexact numbers (ERR_PAYLOAD_NUMBER_PRECISION),
// canonicalizes and hashes. Consumes `doc`.
Fingerprint fingerprint(json::Value doc, const std::vector<std::string>& exclude = {});

// The same for JSON text, parsed with the strict parser: in one pass from the text to the canonical
// bytes (json::canonicalize_text), no Value built; same bytes, hash and refusals as
// fingerprint(json::parse_strict(json_text), exclude).
Fingerprint fingerprint_text(std::string_view json_text, const std::vector<std::string>& exclude = {});

// fingerprint_text and, from the same canonical bytes, the member digests that name what differs
// when the key is reused with another payload (core/json/member_digests.hpp).
struct FingerprintWithMembers {
  Fingerprint fingerprint;
  std::string members;
};
FingerprintWithMembers fingerprint_text_with_members(std::string_view json_text, const std::vector<std::string>& exclude,
                                                     const hash::Digest& salt);

}  // namespace idem
