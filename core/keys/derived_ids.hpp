// Identifiers derived from a key and its generation, so every retry and resume computes the same
// ones and a new generation never repeats an old one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/hash/sha256.hpp"

namespace idem::keys {

// The reference design's deterministic order id (§2.2): 8 lower-case hex digits of the Unix
// seconds `at` (sortable until 2106) followed by the first 64 bits of SHA-256 over the injective
// encoding of (tenant, key, generation): 24 characters. ERR_ARGUMENT_INVALID for a time before
// 1970 or after 2106, or a generation below 1.
std::string derive_order_id(std::string_view tenant, std::string_view key, std::int64_t generation,
                            std::int64_t unix_seconds);

// The key to pass to a payment processor for one generation of a scoped key: "idem_" and 40 hex
// digits of SHA-256 over (scope digest, generation). The same for every attempt and resume of a
// generation, another for the next; the tenant and client key cannot be read back from it.
std::string handler_key(const hash::Digest& scope_digest, std::int64_t generation);

}  // namespace idem::keys
