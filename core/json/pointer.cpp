// RFC 6901 JSON Pointers: parsing, escaping, and removing the members a fingerprint must ignore.
#include "core/json/pointer.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "core/error.hpp"

namespace idem::json {
namespace {

[[noreturn]] void throw_invalid(std::string_view pointer, const std::string& why) {
  throw Error(ErrorCode::JsonPointerInvalid,
              "invalid JSON pointer \"" + std::string(pointer) + "\": " + why,
              "write RFC 6901 pointers such as /payment/trace_id; escape '~' as ~0 and '/' as ~1");
}

// RFC 6901 section 4: an array index is "0" or digits without a leading zero. Anything else
// (including "-", the element after the last) names no element.
bool array_index(const std::string& token, std::size_t size, std::size_t& index) {
  if (token.empty() || token.size() > 19 || (token[0] == '0' && token.size() > 1)) return false;
  std::size_t value = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  if (value >= size) return false;
  index = value;
  return true;
}

// Where a token leads inside `parent`: the index of the member or element, if there is one.
bool child(const Value& parent, const std::string& token, std::size_t& index) {
  if (parent.kind == Kind::Array) return array_index(token, parent.items.size(), index);
  if (parent.kind != Kind::Object) return false;
  const auto it = std::find(parent.keys.begin(), parent.keys.end(), token);
  if (it == parent.keys.end()) return false;
  index = static_cast<std::size_t>(it - parent.keys.begin());
  return true;
}

// One value to remove: the container holding it, its index there, and the container's depth.
struct Target {
  std::size_t depth;
  Value* parent;
  std::size_t index;
};

}  // namespace

std::vector<std::string> parse_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') throw_invalid(pointer, "a pointer must be empty or start with '/'");
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] == '~') {
      const char next = i + 1 < pointer.size() ? pointer[i + 1] : '\0';
      if (next != '0' && next != '1') throw_invalid(pointer, "'~' must be followed by 0 or 1");
      token += next == '0' ? '~' : '/';
      ++i;
    } else {
      token += pointer[i];
    }
  }
  return tokens;
}

std::vector<std::string> parse_exclusion(std::string_view pointer) {
  std::vector<std::string> tokens = parse_pointer(pointer);
  if (tokens.empty()) {
    throw_invalid(pointer, "the empty pointer names the whole document, which cannot be removed");
  }
  return tokens;
}

std::string escape_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (const char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Every pointer is resolved against the document as given, then the targets are removed deepest
// first and, within one container, from the highest index down; so removing "/items/0" does not
// shift what "/items/1" names, and removing "/a" after "/a/b" touches no freed memory.
void remove_pointers(Value& doc, const std::vector<std::string>& pointers) {
  std::vector<Target> targets;
  for (const std::string& pointer : pointers) {
    const std::vector<std::string> tokens = parse_exclusion(pointer);
    Value* parent = &doc;
    std::size_t index = 0;
    bool found = true;
    for (std::size_t depth = 0; depth + 1 < tokens.size() && found; ++depth) {
      found = child(*parent, tokens[depth], index);
      if (found) parent = &parent->items[index];
    }
    if (found && child(*parent, tokens.back(), index)) {
      targets.push_back({tokens.size(), parent, index});
    }
  }
  std::sort(targets.begin(), targets.end(), [](const Target& a, const Target& b) {
    // `<` on pointers into different containers is unspecified; their integer values are not.
    const auto pa = reinterpret_cast<std::uintptr_t>(a.parent);
    const auto pb = reinterpret_cast<std::uintptr_t>(b.parent);
    return std::tie(b.depth, pa, b.index) < std::tie(a.depth, pb, a.index);
  });
  const auto same = [](const Target& a, const Target& b) {
    return a.parent == b.parent && a.index == b.index;
  };
  const auto last = std::unique(targets.begin(), targets.end(), same);
  for (auto it = targets.begin(); it != last; ++it) {
    Value& parent = *it->parent;
    if (parent.kind == Kind::Object) parent.keys.erase(parent.keys.begin() + it->index);
    parent.items.erase(parent.items.begin() + it->index);
  }
}

}  // namespace idem::json
