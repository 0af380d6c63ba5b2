// See derived_ids.hpp. The encodings are pinned by tests/core/derived_ids_test.cpp vectors.
#include "core/keys/derived_ids.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "core/keys/injective_encoding.hpp"

namespace idem::keys {
namespace {

void require_generation(std::int64_t generation) {
  if (generation < 1) {
    throw Error(ErrorCode::ArgumentInvalid, "generation must be 1 or more, got " + std::to_string(generation));
  }
}

}  // namespace

std::string derive_order_id(std::string_view tenant, std::string_view key, std::int64_t generation,
                            std::int64_t unix_seconds) {
  require_generation(generation);
  if (unix_seconds < 0 || unix_seconds > 0xFFFFFFFFLL) {
    throw Error(ErrorCode::ArgumentInvalid,
                "order ids carry the time as 32-bit Unix seconds (1970..2106), got " + std::to_string(unix_seconds));
  }
  const hash::Digest d = InjectiveEncoding("pg_idempotency/order_id/v1").part(tenant).part(key).part(generation).digest();
  char prefix[9];
  std::snprintf(prefix, sizeof prefix, "%08llx", static_cast<unsigned long long>(unix_seconds));
  return std::string(prefix) + hash::to_hex(d).substr(0, 16);
}

std::string handler_key(const hash::Digest& scope_digest, std::int64_t generation) {
  require_generation(generation);
  const std::string_view digest(reinterpret_cast<const char*>(scope_digest.data()), scope_digest.size());
  const hash::Digest d = InjectiveEncoding("pg_idempotency/handler_key/v1").part(digest).part(generation).digest();
  return "idem_" + hash::to_hex(d).substr(0, 40);
}

}  // namespace idem::keys
