// Object ids (ch_…, re_…) and the SHA-256 used for request fingerprints.
#pragma once

#include <string>
#include <string_view>

namespace processor {

// prefix followed by 24 random lowercase hex digits, like Stripe's ids: "ch_3f1c…".
std::string new_object_id(std::string_view prefix);

// Lowercase hex of SHA-256(bytes).
std::string sha256_hex(std::string_view bytes);

}  // namespace processor
