// Validation of client-supplied idempotency keys (the Idempotency-Key header value).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace idem::keys {

// The defaults of idem.key_min_length / idem.key_max_length. 255: Stripe's limit, so a key a
// client already sends to Stripe fits.
struct KeyLimits {
  std::size_t min_length = 16;
  std::size_t max_length = 255;
};

// Throws ErrorCode::KeyMissing for an absent (nullopt) or empty key, ErrorCode::KeyInvalid for
// a key outside the length limits or with a byte outside printable ASCII (0x20..0x7E).
void validate_key(std::optional<std::string_view> key, const KeyLimits& limits = {});

// The other parts of a scoped key come from the service, not the end client, but they are stored
// in every record and audit row: ErrorCode::ArgumentInvalid for a control character (bytes below
// 0x20, or 0x7F) or more than max_bytes bytes, and for an empty tenant.
inline constexpr std::size_t kMaxTenantBytes = 256;
inline constexpr std::size_t kMaxScopePartBytes = 1024;
void validate_scope_part(std::string_view part, const char* what, std::size_t max_bytes, bool allow_empty);

}  // namespace idem::keys
