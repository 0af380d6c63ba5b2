// Object ids and SHA-256; see ids.hpp.
#include "ids.hpp"

#include <openssl/evp.h>

#include <random>
#include <stdexcept>

namespace processor {
namespace {

std::string hex(const unsigned char* bytes, size_t size) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xF];
  }
  return out;
}

}  // namespace

std::string new_object_id(std::string_view prefix) {
  // Straight from the OS (getrandom): ids of processes started at once must not collide.
  thread_local std::random_device random;
  unsigned char bytes[12];
  for (size_t i = 0; i < sizeof bytes; i += 4) {
    const auto word = static_cast<uint32_t>(random());
    for (size_t j = 0; j < 4; ++j) bytes[i + j] = static_cast<unsigned char>(word >> (8 * j));
  }
  return std::string(prefix) + hex(bytes, sizeof bytes);
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed in OpenSSL");
  return hex(digest, size);
}

}  // namespace processor
