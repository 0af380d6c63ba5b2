// The handle format lives here only; the extension formats and parses through these two.
#include "core/keys/handle.hpp"

namespace idem::keys {
namespace {
constexpr std::size_t kHexDigits = 64;
}  // namespace

std::string format_handle(std::string_view tenant, const hash::Digest& scope_digest) {
  std::string out;
  out.reserve(tenant.size() + 1 + kHexDigits);
  out.append(tenant);
  out.push_back(':');
  out.append(hash::to_hex(scope_digest));
  return out;
}

namespace {

std::optional<Handle> parse_plain(std::string_view handle) {
  // At least a one-byte tenant: acquire refuses an empty one.
  if (handle.size() < kHexDigits + 2 || handle[handle.size() - kHexDigits - 1] != ':') return std::nullopt;
  const auto digest = hash::from_hex(handle.substr(handle.size() - kHexDigits));
  if (!digest) return std::nullopt;
  return Handle{handle.substr(0, handle.size() - kHexDigits - 1), *digest, {}};
}

bool lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

std::optional<Handle> parse_handle(std::string_view handle) {
  const std::size_t n = handle.size();
  if (n > kLeaseSecretDigits + 1 && handle[n - kLeaseSecretDigits - 1] == ':' &&
      lower_hex(handle.substr(n - kLeaseSecretDigits))) {
    auto plain = parse_plain(handle.substr(0, n - kLeaseSecretDigits - 1));
    if (plain) plain->lease_secret = handle.substr(n - kLeaseSecretDigits);
    return plain;
  }
  return parse_plain(handle);
}

}  // namespace idem::keys
