// TreeBuilder: turns parse events (from the strict text parser or a jsonb walk) into a Value,
// refusing duplicate member names and nesting deeper than the parser's limit.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "core/json/parser.hpp"
#include "core/json/pointer.hpp"
#include "core/json/value.hpp"

namespace idem::json {
namespace {

// Up to this many members, comparing every pair is cheaper than sorting an index array: most
// pairs differ in length, and there is no allocation.
constexpr std::size_t kLinearScanLimit = 32;

// Members or elements a new object or array has room for before its first reallocation.
constexpr std::size_t kInitialCapacity = 4;

// A member name as shown in an error: JSON-escaped and cut short, so the message stays one
// readable line whatever the client sent.
std::string display_name(std::string_view name) {
  constexpr std::size_t kShown = 64;
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    // Stop at a lead byte, never inside a UTF-8 sequence.
    if (out.size() >= kShown && (c & 0xC0) != 0x80) {
      out += "...";
      break;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

[[noreturn]] void throw_duplicate(std::string_view name, std::size_t offset) {
  std::string message = "duplicate member name \"" + display_name(name) + "\"";
  // Offset 0 means "unknown" (a jsonb walk has no bytes); no member name starts at byte 0.
  if (offset != 0) message += " at byte " + std::to_string(offset);
  throw Error(ErrorCode::JsonInvalid, message, "send each member name once per object");
}

// Index of the earliest member whose name already appeared before it, or n.
template <class Key>
std::size_t first_duplicate(const Key* keys, std::size_t n) {
  if (n < 2) return n;
  if (n <= kLinearScanLimit) {
    for (std::size_t j = 1; j < n; ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        if (keys[i] == keys[j]) return j;
      }
    }
    return n;
  }
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  // Ties broken by position, so within a run of equal names the later member comes second.
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const int c = keys[a].compare(keys[b]);
    return c != 0 ? c < 0 : a < b;
  });
  std::size_t found = n;
  for (std::size_t i = 1; i < n; ++i) {
    if (keys[order[i - 1]] == keys[order[i]]) found = std::min<std::size_t>(found, order[i]);
  }
  return found;
}

}  // namespace

namespace detail {

void throw_duplicate_name(std::string_view name, std::size_t offset) { throw_duplicate(name, offset); }

void check_unique_names(const std::string* keys, std::size_t n, const std::size_t* offsets) {
  const std::size_t dup = first_duplicate(keys, n);
  if (dup != n) throw_duplicate(keys[dup], offsets[dup]);
}

}  // namespace detail

void TreeBuilder::add(Value v) {
  if (stack_.empty()) {
    if (has_root_) throw Error(ErrorCode::Internal, "TreeBuilder: more than one root value");
    root_ = std::move(v);
    has_root_ = true;
    return;
  }
  stack_.back()->items.push_back(std::move(v));
}

void TreeBuilder::begin_object() {
  // The parser refuses this earlier with a byte offset; this guard keeps a jsonb walk (and the
  // recursive canonicalizer behind it) inside the same limit.
  if (stack_.size() >= kMaxDepth) {
    throw Error(ErrorCode::JsonInvalid,
                "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  Value v;
  v.kind = Kind::Object;
  // Request bodies are mostly small containers: room for a few members up front skips the
  // 1 -> 2 -> 4 reallocations; more than 4 costs large documents more than it saves small ones
  // (docs/json-parser.md, Throughput).
  v.items.reserve(kInitialCapacity);
  v.keys.reserve(kInitialCapacity);
  add(std::move(v));
  stack_.push_back(stack_.empty() ? &root_ : &stack_.back()->items.back());
}

void TreeBuilder::begin_array() {
  if (stack_.size() >= kMaxDepth) {
    throw Error(ErrorCode::JsonInvalid,
                "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  Value v;
  v.kind = Kind::Array;
  v.items.reserve(kInitialCapacity);
  add(std::move(v));
  stack_.push_back(stack_.empty() ? &root_ : &stack_.back()->items.back());
}

void TreeBuilder::key(std::string name, std::size_t offset) {
  key_offsets_.push_back(offset);
  stack_.back()->keys.push_back(std::move(name));
}

void TreeBuilder::end_object() {
  const std::vector<std::string>& keys = stack_.back()->keys;
  const std::size_t n = keys.size();
  detail::check_unique_names(keys.data(), n, key_offsets_.data() + key_offsets_.size() - n);
  key_offsets_.resize(key_offsets_.size() - n);
  stack_.pop_back();
}

void TreeBuilder::end_array() { stack_.pop_back(); }

void TreeBuilder::string(std::string text) {
  Value v;
  v.kind = Kind::String;
  v.text = std::move(text);
  add(std::move(v));
}

void TreeBuilder::number(std::string spelling) {
  Value v;
  v.kind = Kind::Number;
  v.text = std::move(spelling);
  add(std::move(v));
}

void TreeBuilder::boolean(bool value) {
  Value v;
  v.kind = value ? Kind::True : Kind::False;
  add(std::move(v));
}

void TreeBuilder::null() { add(Value{}); }

std::string TreeBuilder::next_pointer() const {
  std::string pointer;
  for (std::size_t level = 0; level < stack_.size(); ++level) {
    const Value& c = *stack_[level];
    const bool innermost = level + 1 == stack_.size();
    if (c.kind == Kind::Object) {
      if (!c.keys.empty()) pointer += "/" + escape_token(c.keys.back());
    } else {
      // An open child is already the last element; the next value goes after the last one.
      const std::size_t index = innermost ? c.items.size() : c.items.size() - 1;
      pointer += "/" + std::to_string(index);
    }
  }
  return pointer;
}

Value TreeBuilder::finish() {
  if (!has_root_ || !stack_.empty()) {
    throw Error(ErrorCode::Internal, "TreeBuilder: document finished before it was complete");
  }
  has_root_ = false;
  return std::move(root_);
}

}  // namespace idem::json
