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

struct Handle {
  std::string_view tenant;  // points into the parsed text
  hash::Digest scope_digest;
};

// nullopt for anything format_handle did not produce.
std::optional<Handle> parse_handle(std::string_view handle);

}  // namespace idem::keys
