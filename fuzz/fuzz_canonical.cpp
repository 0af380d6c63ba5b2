// libFuzzer target for the strict parser and RFC 8785 canonicalizer: canonical output must parse
// again and canonicalize to itself (idempotence), and nothing may crash or leak on any input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace idem::json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string first;
  try {
    const Value doc = parse_strict(text);
    try {
      require_exact_numbers(doc);
    } catch (const idem::Error& e) {
      if (e.code() != idem::ErrorCode::NumberPrecision) std::abort();
    }
    first = canonicalize(doc);
  } catch (const idem::Error& e) {
    // Refusals are expected; an Internal error is a bug.
    if (e.code() == idem::ErrorCode::Internal) std::abort();
    return 0;
  }
  // A canonical document is valid strict JSON, and canonicalizing it changes nothing.
  std::string second;
  try {
    second = canonicalize(parse_strict(first));
  } catch (const idem::Error&) {
    std::abort();
  }
  if (second != first) std::abort();
  return 0;
}
