// Validation of client-supplied idempotency keys (the Idempotency-Key header value).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace idem::keys {

struct KeyLimits {
  std::size_t min_length = 16;
  std::size_t max_length = 128;
};

// Throws ErrorCode::KeyMissing for an absent (nullopt) or empty key, ErrorCode::KeyInvalid for
// a key outside the length limits or with a byte outside printable ASCII (0x20..0x7E).
void validate_key(std::optional<std::string_view> key, const KeyLimits& limits = {});

}  // namespace idem::keys
