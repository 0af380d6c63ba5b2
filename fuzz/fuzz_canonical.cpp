// libFuzzer target for the strict parser and RFC 8785 canonicalizer: canonical output must parse
// again and canonicalize to itself (idempotence); the one-pass canonicalizer (canonicalize_text,
// what fingerprint_text hashes) must agree with the tree path (parse_strict, remove_pointers,
// require_exact_numbers, canonicalize) byte for byte, or refuse with the same code and message,
// with no exclusions and with exclusions picked from the document; and nothing may crash or leak.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "core/json/pointer.hpp"

namespace {

using namespace idem::json;

struct Outcome {
  bool accepted = false;
  std::string canonical;
  idem::ErrorCode code = idem::ErrorCode::Internal;
  std::string message;
};

template <typename Run>
Outcome outcome_of(Run run) {
  Outcome o;
  try {
    o.canonical = run();
    o.accepted = true;
  } catch (const idem::Error& e) {
    if (e.code() == idem::ErrorCode::Internal) std::abort();  // a bug, whichever path
    o.code = e.code();
    o.message = e.what();
  }
  return o;
}

void same_or_abort(std::string_view text, const std::vector<std::string>& exclude) {
  const Outcome tree = outcome_of([&] {
    Value doc = parse_strict(text);
    if (!exclude.empty()) remove_pointers(doc, exclude);
    require_exact_numbers(doc);
    return canonicalize(doc);
  });
  const Outcome one_pass = outcome_of([&] { return canonicalize_text(text, exclude); });
  if (tree.accepted != one_pass.accepted) std::abort();
  if (tree.accepted ? tree.canonical != one_pass.canonical
                    : tree.code != one_pass.code || tree.message != one_pass.message) {
    std::abort();
  }
}

// Pointers to values of `v` (escaped), at most `limit` of them, in document order.
void collect(const Value& v, const std::string& at, std::vector<std::string>& out, std::size_t limit) {
  if (out.size() >= limit) return;
  if (!at.empty()) out.push_back(at);
  if (v.kind == Kind::Array) {
    for (std::size_t i = 0; i < v.items.size(); ++i) collect(v.items[i], at + "/" + std::to_string(i), out, limit);
  } else if (v.kind == Kind::Object) {
    for (std::size_t i = 0; i < v.items.size(); ++i) collect(v.items[i], at + "/" + escape_token(v.keys[i]), out, limit);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  same_or_abort(text, {});
  std::string first;
  try {
    const Value doc = parse_strict(text);
    // Exclusions the input picks (from its own bytes): values that are there, a malformed one.
    std::vector<std::string> present;
    collect(doc, "", present, 64);
    if (!present.empty()) {
      const std::size_t a = (size * 31 + (size ? data[0] : 0)) % present.size();
      const std::size_t b = (size ? data[size - 1] : 0) % present.size();
      same_or_abort(text, {present[a]});
      same_or_abort(text, {present[b], present[a], "/missing/0"});
      same_or_abort(text, {present[a] + "/0", present[b] + "/~2"});
    }
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
