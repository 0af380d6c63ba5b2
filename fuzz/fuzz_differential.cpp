// libFuzzer target: the hand-written parse_strict against the nlohmann-json reference
// (tests/reference/). Both must accept with byte-identical canonical forms, or both refuse with the
// same error code and byte offset; anything else aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "tests/reference/nlohmann_parser.hpp"

namespace {

struct Outcome {
  bool accepted = false;
  std::string canonical;
  idem::ErrorCode code = idem::ErrorCode::Internal;
  std::string message;
};

template <typename Parse>
Outcome outcome_of(Parse parse, std::string_view text) {
  Outcome o;
  try {
    o.canonical = idem::json::canonicalize(parse(text));
    o.accepted = true;
  } catch (const idem::Error& e) {
    if (e.code() == idem::ErrorCode::Internal) std::abort();  // a bug, whichever parser
    o.code = e.code();
    o.message = e.what();
  }
  return o;
}

// The "byte N" a message names ("" when it names none).
std::string byte_of(const std::string& message) {
  const std::size_t at = message.find("byte ");
  if (at == std::string::npos) return {};
  const std::size_t end = message.find_first_not_of("0123456789", at + 5);
  return message.substr(at + 5, end == std::string::npos ? end : end - at - 5);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Outcome ours = outcome_of(idem::json::parse_strict, text);
  const Outcome ref = outcome_of(idem::json::reference::parse_strict_nlohmann, text);
  if (ours.accepted != ref.accepted) std::abort();
  if (ours.accepted) {
    if (ours.canonical != ref.canonical) std::abort();
    return 0;
  }
  if (ours.code != ref.code || byte_of(ours.message) != byte_of(ref.message)) std::abort();
  // Same words too, except where nlohmann met a NUL byte outside a string (it takes one for the
  // end of the input; its wrapper refuses it at the right byte, in other words).
  if (ours.message != ref.message && text.find('\0') == std::string_view::npos) std::abort();
  return 0;
}
