// Keys are restricted to printable ASCII so that they survive HTTP headers, logs and psql output
// unchanged; the limits come from GUCs in the extension and from options in the client.
#include "core/keys/key_validation.hpp"

#include <string>

#include "core/error.hpp"

namespace idem::keys {

void validate_key(std::optional<std::string_view> key, const KeyLimits& limits) {
  static const std::string kHint =
      "Send an Idempotency-Key of printable ASCII characters, for example a UUIDv4.";
  if (!key || key->empty()) {
    throw Error(ErrorCode::KeyMissing, "an idempotency key is required", kHint);
  }
  // Bytes first: once every byte is ASCII, the length in bytes is the length in characters.
  for (std::size_t i = 0; i < key->size(); ++i) {
    const auto c = static_cast<unsigned char>((*key)[i]);
    if (c < 0x20 || c > 0x7E) {
      throw Error(ErrorCode::KeyInvalid,
                  "idempotency key has a byte outside printable ASCII (0x" +
                      std::string(1, "0123456789ABCDEF"[c >> 4]) +
                      std::string(1, "0123456789ABCDEF"[c & 0xF]) + ") at position " +
                      std::to_string(i),
                  kHint);
    }
  }
  if (key->size() < limits.min_length || key->size() > limits.max_length) {
    throw Error(ErrorCode::KeyInvalid,
                "idempotency key is " + std::to_string(key->size()) + " characters long; it must be " +
                    std::to_string(limits.min_length) + " to " + std::to_string(limits.max_length),
                kHint);
  }
}

void validate_scope_part(std::string_view part, const char* what, std::size_t max_bytes, bool allow_empty) {
  if (part.empty() && !allow_empty) throw Error(ErrorCode::ArgumentInvalid, std::string(what) + " must not be empty");
  if (part.size() > max_bytes) {
    throw Error(ErrorCode::ArgumentInvalid, std::string(what) + " is " + std::to_string(part.size()) +
                                                " bytes long; it may be at most " + std::to_string(max_bytes));
  }
  for (std::size_t i = 0; i < part.size(); ++i) {
    const auto c = static_cast<unsigned char>(part[i]);
    if (c < 0x20 || c == 0x7F) {
      throw Error(ErrorCode::ArgumentInvalid,
                  std::string(what) + " has a control character at byte " + std::to_string(i));
    }
  }
}

}  // namespace idem::keys
