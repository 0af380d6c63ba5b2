// See injective_encoding.hpp.
#include "core/keys/injective_encoding.hpp"

#include <limits>

#include "core/error.hpp"

namespace idem::keys {

InjectiveEncoding::InjectiveEncoding(std::string_view domain_tag, std::size_t reserve) {
  bytes_.reserve(domain_tag.size() + 1 + reserve);
  bytes_.append(domain_tag);
  bytes_.push_back('\0');
}

InjectiveEncoding& InjectiveEncoding::part(std::string_view bytes) {
  if (bytes.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorCode::ArgumentInvalid, "a key part is longer than 4 GiB");
  }
  const auto n = static_cast<std::uint32_t>(bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8) bytes_.push_back(static_cast<char>(n >> shift));
  bytes_.append(bytes);
  return *this;
}

InjectiveEncoding& InjectiveEncoding::part(std::int64_t number) {
  const auto n = static_cast<std::uint64_t>(number);
  for (int shift = 56; shift >= 0; shift -= 8) bytes_.push_back(static_cast<char>(n >> shift));
  return *this;
}

}  // namespace idem::keys
