#include "auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <stdexcept>

namespace checkout {
namespace {

constexpr char kB64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url(const std::string& in) {
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kB64Url[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += kB64Url[(v >> 18) & 63];
    out += kB64Url[(v >> 12) & 63];
  } else if (i + 2 == in.size()) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    for (int s : {18, 12, 6}) out += kB64Url[(v >> s) & 63];
  }
  return out;
}

std::optional<std::string> unbase64url(const std::string& in) {
  std::string out;
  unsigned v = 0;
  int bits = 0;
  for (char c : in) {
    const char* at = std::char_traits<char>::find(kB64Url, 64, c);
    if (at == nullptr) return std::nullopt;
    v = (v << 6) | static_cast<unsigned>(at - kB64Url);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xFF);
    }
  }
  return out;
}

std::string hmac_hex(const std::string& secret, const std::string& payload) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), mac.data(), &len);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

}  // namespace

std::string mint_token(const std::string& secret, const std::string& tenant, const std::string& caller) {
  if (tenant.empty() || caller.empty() || tenant.find(':') != std::string::npos) {
    throw std::invalid_argument("a token needs a non-empty tenant without ':' and a non-empty caller");
  }
  const std::string payload = base64url(tenant + ":" + caller);
  return payload + "." + hmac_hex(secret, payload);
}

std::optional<Principal> verify_bearer(const std::string& secret, const std::string& authorization) {
  const std::string scheme = "Bearer ";
  if (authorization.compare(0, scheme.size(), scheme) != 0) return std::nullopt;
  const std::string token = authorization.substr(scheme.size());
  const auto dot = token.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string payload = token.substr(0, dot);
  const std::string mac = token.substr(dot + 1);
  const std::string expected = hmac_hex(secret, payload);
  if (mac.size() != expected.size() || CRYPTO_memcmp(mac.data(), expected.data(), mac.size()) != 0) return std::nullopt;
  const auto decoded = unbase64url(payload);
  if (!decoded) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == decoded->size()) return std::nullopt;
  return Principal{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

}  // namespace checkout
