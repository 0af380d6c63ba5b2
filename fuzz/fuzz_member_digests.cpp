// libFuzzer target for the member digests (core/json/member_digests.hpp), whose decoder reads
// bytes any caller of acquire's fingerprint form may send. The input is either such bytes or
// two JSON texts. Bytes: whatever valid_member_digests accepts, differing_members reads, and an
// encoding differs from itself nowhere; whatever it refuses, differing_members refuses too.
// JSON: what fingerprint_text_with_members writes is an encoding; it agrees with fingerprint_text
// on the fingerprint; equal texts differ nowhere; and every pointer named is a JSON pointer
// (empty, or "/"-led). Nothing may crash or leak.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/json/member_digests.hpp"

namespace {

using namespace idem;

const hash::Digest kSalt = json::member_salt(hash::sha256("fuzz"));

void check_bytes(std::string_view bytes) {
  const bool valid = json::valid_member_digests(bytes);
  const auto self = json::differing_members(bytes, bytes);
  if (self.has_value() != valid) std::abort();
  if (valid && !self->empty()) std::abort();
}

bool members_of(std::string_view text, std::string& out) {
  try {
    const auto both = fingerprint_text_with_members(text, {}, kSalt);
    if (both.fingerprint.hash != fingerprint_text(text).hash) std::abort();
    out = both.members;
    return true;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Internal) std::abort();
    return false;
  }
}

void check_json(std::string_view input) {
  const std::size_t cut = input.find('\n');
  const std::string_view first = input.substr(0, cut), second = cut == std::string_view::npos ? first : input.substr(cut + 1);
  std::string a, b;
  if (!members_of(first, a)) return;
  if (!json::valid_member_digests(a)) std::abort();
  check_bytes(a);
  if (!members_of(second, b)) return;
  const auto differ = json::differing_members(a, b);
  if (!differ) std::abort();
  for (const std::string& pointer : *differ) {
    if (!pointer.empty() && pointer[0] != '/') std::abort();
  }
  if (first == second && !differ->empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) check_bytes(rest);
  else check_json(rest);
  return 0;
}
