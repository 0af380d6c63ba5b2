// The injective byte encoding every digest of ours hashes: a domain tag, a NUL, then each part
// prefixed by its length as 4 big-endian bytes ("a#b"+"c" never meets "a"+"b#c"). The tag keeps
// digests of different purposes apart. Changing it is a breaking change (golden vectors pin it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/hash/sha256.hpp"

namespace idem::keys {

class InjectiveEncoding {
 public:
  explicit InjectiveEncoding(std::string_view domain_tag, std::size_t reserve = 64);
  InjectiveEncoding& part(std::string_view bytes);
  InjectiveEncoding& part(std::int64_t number);  // 8 big-endian bytes (fixed size: no prefix)
  hash::Digest digest() const { return hash::sha256(bytes_); }

 private:
  std::string bytes_;
};

}  // namespace idem::keys
