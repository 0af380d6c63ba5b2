// EVP rather than the deprecated SHA256_* calls: EVP picks the CPU's SHA extensions and stays
// available under OpenSSL 3's FIPS provider.
#include "core/hash/sha256.hpp"

#include <openssl/evp.h>

#include "core/error.hpp"

namespace idem::hash {

namespace {

// The SHA-256 implementation, looked up once. EVP_sha256() makes every EVP_Digest fetch it from
// the provider again (a locked lookup, a sizeable part of hashing a small body: docs/json-parser.md,
// Throughput); an explicitly fetched EVP_MD is used as it is. Kept for the life of the process.
const EVP_MD* sha256_md() {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
  static const EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (fetched != nullptr) return fetched;
#endif
  return EVP_sha256();
}

}  // namespace

Digest sha256(std::string_view bytes) {
  Digest out{};
  unsigned int len = 0;
  // EVP_Digest is the one-shot form: no context to leak if anything below throws.
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, sha256_md(), nullptr) != 1 ||
      len != out.size()) {
    throw Error(ErrorCode::Internal, "OpenSSL EVP_Digest(SHA-256) failed");
  }
  return out;
}

std::string to_hex(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(digest.size() * 2, '0');
  for (std::size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return out;
}

std::optional<Digest> from_hex(std::string_view hex) {
  const auto nibble = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  Digest out{};
  if (hex.size() != out.size() * 2) return std::nullopt;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(hex[2 * i]);
    const int lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

}  // namespace idem::hash
