// SHA-256 through OpenSSL's EVP interface (the same bytes in the backend and in the client).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace idem::hash {

using Digest = std::array<std::uint8_t, 32>;

Digest sha256(std::string_view bytes);

// Lower-case hex, 64 characters.
std::string to_hex(const Digest& digest);

// The inverse of to_hex: exactly 64 lower-case hex digits, else nullopt.
std::optional<Digest> from_hex(std::string_view hex);

}  // namespace idem::hash
