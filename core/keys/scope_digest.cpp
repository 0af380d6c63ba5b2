// Injective encoding of the scoped key; changing it is a breaking change (golden vectors pin it).
#include "core/keys/scope_digest.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace idem::keys {
namespace {

constexpr std::string_view kDomainTag{"pg_idempotency/scope/v1", 23};

void append_part(std::string& out, std::string_view part) {
  if (part.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorCode::ArgumentInvalid, "a scoped key part is longer than 4 GiB");
  }
  const auto n = static_cast<std::uint32_t>(part.size());
  out.push_back(static_cast<char>(n >> 24));
  out.push_back(static_cast<char>(n >> 16));
  out.push_back(static_cast<char>(n >> 8));
  out.push_back(static_cast<char>(n));
  out.append(part);
}

}  // namespace

hash::Digest scope_digest(std::string_view tenant, std::string_view caller, std::string_view resource,
                          std::string_view key) {
  std::string encoded;
  encoded.reserve(kDomainTag.size() + 1 + 16 + tenant.size() + caller.size() + resource.size() +
                  key.size());
  encoded.append(kDomainTag);
  encoded.push_back('\0');
  append_part(encoded, tenant);
  append_part(encoded, caller);
  append_part(encoded, resource);
  append_part(encoded, key);
  return hash::sha256(encoded);
}

}  // namespace idem::keys
