// RFC 8785 (JCS) serialization of a Value, and the check that names the first number whose
// canonical form would silently differ from what the client sent.
#include "core/json/canonical.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "core/interrupts.hpp"
#include "core/json/canonical_detail.hpp"
#include "core/json/number.hpp"
#include "core/json/pointer.hpp"

namespace idem::json {
namespace {

using detail::append_string;
using detail::utf16_less;

// Objects up to this size sort their member indexes in a stack buffer, without allocating.
constexpr std::size_t kSmallObject = 32;

void write(const Value& v, std::string& out);

void write_object(const Value& v, std::string& out) {
  const std::size_t n = v.keys.size();
  // Sort indexes, not members: the Value is const and moving strings would cost more.
  std::uint32_t small[kSmallObject];
  std::vector<std::uint32_t> large;
  std::uint32_t* order = small;
  if (n > kSmallObject) {
    large.resize(n);
    order = large.data();
  }
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::sort(order, order + n, [&v](std::uint32_t a, std::uint32_t b) {
    return utf16_less(v.keys[a], v.keys[b]);
  });
  out.push_back('{');
  for (std::size_t i = 0; i < n; ++i) {
    if (i != 0) out.push_back(',');
    append_string(out, v.keys[order[i]]);
    out.push_back(':');
    write(v.items[order[i]], out);
  }
  out.push_back('}');
}

// Recursion is bounded: TreeBuilder refuses nesting deeper than kMaxDepth.
void write(const Value& v, std::string& out) {
  poll_interrupts();
  switch (v.kind) {
    case Kind::Null: out.append("null", 4); return;
    case Kind::False: out.append("false", 5); return;
    case Kind::True: out.append("true", 4); return;
    case Kind::Number: detail::append_canonical_number(out, v.text); return;
    case Kind::String: append_string(out, v.text); return;
    case Kind::Array:
      out.push_back('[');
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (i != 0) out.push_back(',');
        write(v.items[i], out);
      }
      out.push_back(']');
      return;
    case Kind::Object: write_object(v, out); return;
  }
}

// The first inexact number in document order, or nullptr; on the way back up, each level puts
// its reference token in front of `pointer`, so the pointer is only built when one is found.
const Value* find_inexact(const Value& v, std::string& pointer) {
  switch (v.kind) {
    case Kind::Number: return is_exact(v.text) ? nullptr : &v;
    case Kind::Array:
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (const Value* found = find_inexact(v.items[i], pointer)) {
          pointer.insert(0, "/" + std::to_string(i));
          return found;
        }
      }
      return nullptr;
    case Kind::Object:
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (const Value* found = find_inexact(v.items[i], pointer)) {
          pointer.insert(0, "/" + escape_token(v.keys[i]));
          return found;
        }
      }
      return nullptr;
    default: return nullptr;
  }
}

}  // namespace

std::string canonicalize(const Value& doc) {
  std::string out;
  out.reserve(4096);  // one allocation for typical request bodies; larger ones grow by doubling
  write(doc, out);
  return out;
}

void require_exact_numbers(const Value& doc) {
  std::string pointer;
  const Value* found = find_inexact(doc, pointer);
  if (found == nullptr) return;
  constexpr std::size_t kShown = 40;  // a client may send a megabyte of digits
  std::string spelling = found->text.substr(0, kShown);
  if (found->text.size() > kShown) spelling += "...";
  throw Error(ErrorCode::NumberPrecision,
              "number " + spelling + " at " + (pointer.empty() ? "\"\" (the document)" : pointer) +
                  " cannot be represented exactly as an IEEE double",
              "send it as a string or reduce its precision");
}

}  // namespace idem::json
