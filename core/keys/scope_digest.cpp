// Injective encoding of the scoped key; changing it is a breaking change (golden vectors pin it).
#include "core/keys/scope_digest.hpp"

#include "core/keys/injective_encoding.hpp"

namespace idem::keys {

hash::Digest scope_digest(std::string_view tenant, std::string_view caller, std::string_view resource,
                          std::string_view key) {
  return InjectiveEncoding("pg_idempotency/scope/v1", 16 + tenant.size() + caller.size() + resource.size() + key.size())
      .part(tenant)
      .part(caller)
      .part(resource)
      .part(key)
      .digest();
}

}  // namespace idem::keys
