// Handles: how a caller names its record between acquire and checkpoint/complete/release.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/hash/sha256.hpp"

namespace idem::keys {

// "<tenant>:<64 lower-case hex digits of the scope digest>". The tenant stays readable (and
// routable: calls that take only a handle still know their tenant); parsed from the right, so a
// tenant may itself contain ':'.
std::string format_handle(std::string_view tenant, const hash::Digest& scope_digest);

// The handle acquire gives a holder: "<handle>:<32 lower-case hex digits>", the lease's
// secret, which checkpoint/complete/release require (the record keeps its SHA-256), so a fencing
// token guessed from the global sequence is not enough to act on another caller's lease. A plain
// handle never ends that way (its last 64 characters are hex digits), so both parse unambiguously.
constexpr std::size_t kLeaseSecretDigits = 32;

struct Handle {
  std::string_view tenant;  // points into the parsed text
  hash::Digest scope_digest;
  std::string_view lease_secret;  // empty for a plain handle
};

// nullopt for anything format_handle (plus a lease secret) did not produce.
std::optional<Handle> parse_handle(std::string_view handle);

}  // namespace idem::keys
