// member_digests.hpp: a walk over canonical JSON (no whitespace, the escapes RFC 8785 writes).
#include "core/json/member_digests.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "core/json/canonical_detail.hpp"
#include "core/json/lexical.hpp"
#include "core/json/pointer.hpp"

namespace idem::json {
namespace {

constexpr std::size_t kDigestBytes = 4;  // a hint that names fields, not what decides a mismatch

struct Node {
  std::string name;        // decoded; an array element's is its index
  hash::Digest digest;
  bool is_object = false;  // a container above kMemberDepth: its children below
  std::vector<Node> children;
};

class Walk {
 public:
  Walk(std::string_view canonical, const hash::Digest& salt) : in_(canonical), salt_(salt) {}

  // The value at pos_ (pointer, depth), with its descendants down to kMemberDepth.
  Node value(const std::string& pointer, int depth) {
    Node node;
    const std::size_t begin = pos_;
    const char c = peek();
    if ((c == '{' || c == '[') && depth < kMemberDepth) {
      node.is_object = c == '{';
      std::string children;  // the children's digests, in order
      ++pos_;
      while (peek() != (c == '{' ? '}' : ']')) {
        if (!node.children.empty()) expect(',');
        std::string name = c == '{' ? this->name() : std::to_string(node.children.size());
        if (c == '{') expect(':');
        Node child = value(pointer + "/" + escape_token(name), depth + 1);
        child.name = std::move(name);
        children.append(reinterpret_cast<const char*>(child.digest.data()), child.digest.size());
        node.children.push_back(std::move(child));
      }
      ++pos_;
      node.digest = digest(pointer, node.is_object ? 'o' : 'a', children);
      return node;
    }
    skip();
    node.digest = digest(pointer, 'v', in_.substr(begin, pos_ - begin));
    return node;
  }

 private:
  char peek() const { return pos_ < in_.size() ? in_[pos_] : '\0'; }
  void expect(char c) {
    if (peek() != c) throw std::invalid_argument("not canonical JSON");
    ++pos_;
  }

  hash::Digest digest(const std::string& pointer, char kind, std::string_view content) const {
    std::string bytes(reinterpret_cast<const char*>(salt_.data()), salt_.size());
    bytes.append(pointer).push_back('\0');
    bytes.push_back(kind);
    bytes.append(content);
    return hash::sha256(bytes);
  }

  // A member name, decoded (canonical strings escape only '"', '\\' and control characters).
  std::string name() {
    expect('"');
    std::string out;
    while (peek() != '"') {
      if (pos_ >= in_.size()) throw std::invalid_argument("not canonical JSON");
      char c = in_[pos_++];
      if (c == '\\') {
        const char e = in_[pos_++];
        switch (e) {
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'n': c = '\n'; break;
          case 'r': c = '\r'; break;
          case 't': c = '\t'; break;
          case 'u': c = static_cast<char>(std::stoi(std::string(in_.substr(pos_, 4)), nullptr, 16)); pos_ += 4; break;
          default: c = e;
        }
      }
      out.push_back(c);
    }
    ++pos_;
    return out;
  }

  // Past one value of any depth.
  void skip() {
    int open = 0;
    do {
      const char c = peek();
      if (c == '\0') throw std::invalid_argument("not canonical JSON");
      if (c == '"') {
        for (++pos_; peek() != '"'; ++pos_) {
          if (peek() == '\\') ++pos_;
          if (pos_ >= in_.size()) throw std::invalid_argument("not canonical JSON");
        }
        ++pos_;
      } else if (c == '{' || c == '[') {
        ++open;
        ++pos_;
      } else if (c == '}' || c == ']') {
        --open;
        ++pos_;
      } else if (c == ',' || c == ':') {
        ++pos_;
      } else {
        while (pos_ < in_.size() && std::string_view(",:]}").find(in_[pos_]) == std::string_view::npos) ++pos_;
      }
    } while (open > 0);
  }

  std::string_view in_;
  const hash::Digest& salt_;
  std::size_t pos_ = 0;
};

void put_varint(std::string& out, std::size_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

std::size_t varint_size(std::size_t v) {
  std::size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

std::size_t shape(const Node& n) { return n.children.size() << 1 | (n.is_object ? 1 : 0); }

// The nodes and bytes each level adds (level 1: the root's children).
void measure(const Node& n, bool named, int depth, std::size_t count[], std::size_t bytes[]) {
  if (depth > 0) {
    ++count[depth];
    bytes[depth] += (named ? varint_size(n.name.size()) + n.name.size() : 0) + kDigestBytes;
    if (depth < kMemberDepth) bytes[depth] += varint_size(shape(n));  // its shape, if the next level is kept
  }
  for (const Node& c : n.children) measure(c, n.is_object, depth + 1, count, bytes);
}

void put(std::string& out, const Node& n, bool named, int depth, int kept) {
  if (named) {
    put_varint(out, n.name.size());
    out.append(n.name);
  }
  out.append(reinterpret_cast<const char*>(n.digest.data()), kDigestBytes);
  if (depth == kept) return;
  put_varint(out, shape(n));
  for (const Node& c : n.children) put(out, c, n.is_object, depth + 1, kept);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool varint(std::size_t& v) {
    v = 0;
    for (int shift = 0; shift < 28; shift += 7) {
      if (pos_ >= in_.size()) return false;
      const auto b = static_cast<unsigned char>(in_[pos_++]);
      v |= static_cast<std::size_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool bytes(std::size_t n, std::string& out) {
    if (in_.size() - pos_ < n) return false;
    out.assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
};

struct Decoded {
  int depth = 0;
  bool root_is_object = false;  // read when depth > 0
  std::vector<std::pair<std::string, std::string>> entries;  // pointer, digest bytes; document order
};

// Well-formed UTF-8 (lexical.hpp's rule, the parser's): a name becomes part of a JSON pointer
// returned as text.
bool well_formed_utf8(std::string_view s) {
  const char* const end = s.data() + s.size();
  const char* bad = nullptr;
  for (const char* p = s.data(); p != end;) {
    p = static_cast<unsigned char>(*p) < 0x80 ? p + 1 : detail::utf8_sequence_end(p, end, bad);
    if (p == nullptr) return false;
  }
  return true;
}

// A pointer as text: PostgreSQL's text holds no NUL (a name may carry one, escaped in JSON), so
// U+FFFD stands for it in what is returned; the comparison itself used the name as it is.
std::string pointer_text(std::string pointer) {
  for (std::size_t at; (at = pointer.find('\0')) != std::string::npos;) pointer.replace(at, 1, "\xEF\xBF\xBD");  // U+FFFD
  return pointer;
}

// The children a shape announces, read into out under `pointer`.
bool read_children(Reader& r, std::size_t shape, const std::string& pointer, int depth, int kept, Decoded& out) {
  const bool is_object = shape & 1;
  const std::size_t n = shape >> 1;
  if (n > kMaxMemberDigests) return false;
  std::string previous;
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = std::to_string(i), digest;
    std::size_t length = 0;
    if (is_object) {
      if (!r.varint(length) || length > kMaxMemberDigestBytes || !r.bytes(length, name)) return false;
      // Names as member_digests writes them: UTF-8, in RFC 8785's order, so none twice.
      if (!well_formed_utf8(name) || (i > 0 && !detail::utf16_less(previous, name))) return false;
      previous = name;
    }
    if (!r.bytes(kDigestBytes, digest)) return false;
    const std::string child = pointer + "/" + escape_token(name);  // as text only when returned
    out.entries.emplace_back(child, digest);
    if (out.entries.size() > kMaxMemberDigests) return false;
    if (depth < kept) {
      std::size_t child_shape = 0;
      if (!r.varint(child_shape) || !read_children(r, child_shape, child, depth + 1, kept, out)) return false;
    }
  }
  return true;
}

std::optional<Decoded> decode(std::string_view in) {
  if (in.size() < 2 || in.size() > kMaxMemberDigestBytes || static_cast<unsigned char>(in[0]) != kMemberDigestsFormat) return std::nullopt;
  Decoded out;
  out.depth = static_cast<unsigned char>(in[1]);
  if (out.depth > kMemberDepth) return std::nullopt;
  Reader r(in.substr(2));
  if (out.depth > 0) {
    std::size_t root = 0;
    if (!r.varint(root) || !read_children(r, root, "", 1, out.depth, out)) return std::nullopt;
    out.root_is_object = root & 1;
  }
  if (!r.done()) return std::nullopt;
  return out;
}

int depth_of(const std::string& pointer) { return static_cast<int>(std::count(pointer.begin(), pointer.end(), '/')); }

}  // namespace

hash::Digest member_salt(const hash::Digest& scope_digest) {
  std::string bytes = "idem payload members\n";
  bytes.append(reinterpret_cast<const char*>(scope_digest.data()), scope_digest.size());
  return hash::sha256(bytes);
}

std::string member_digests(std::string_view canonical, const hash::Digest& salt) {
  Walk walk(canonical, salt);
  const Node root = walk.value("", 0);
  std::size_t count[kMemberDepth + 1] = {}, bytes[kMemberDepth + 1] = {};
  measure(root, false, 0, count, bytes);
  int kept = 0;
  std::size_t kept_count = 0, kept_bytes = 2 + varint_size(shape(root));
  for (int depth = 1; depth <= kMemberDepth; ++depth) {
    // A level's shapes are written only when the next level is; counted with it, they fit too.
    if (kept_count + count[depth] > kMaxMemberDigests || kept_bytes + bytes[depth] > kMaxMemberDigestBytes) break;
    kept_count += count[depth];
    kept_bytes += bytes[depth];
    kept = depth;
  }
  std::string out;
  out.push_back(static_cast<char>(kMemberDigestsFormat));
  out.push_back(static_cast<char>(kept));
  if (kept == 0) return out;
  put_varint(out, shape(root));
  for (const Node& c : root.children) put(out, c, root.is_object, 1, kept);
  return out;
}

bool valid_member_digests(std::string_view bytes) { return decode(bytes).has_value(); }

std::optional<std::vector<std::string>> differing_members(std::string_view first, std::string_view second) {
  const auto a = decode(first), b = decode(second);
  if (!a || !b) return std::nullopt;
  const int depth = std::min(a->depth, b->depth);
  // An object became an array, or back: the root itself ("" as a JSON pointer) differs.
  if (depth > 0 && a->root_is_object != b->root_is_object) return std::vector<std::string>{""};
  std::unordered_map<std::string, std::string> in_b;
  for (const auto& [pointer, digest] : b->entries) {
    if (depth_of(pointer) <= depth) in_b.emplace(pointer, digest);
  }
  std::vector<std::string> differ;
  std::unordered_map<std::string, bool> seen;
  for (const auto& [pointer, digest] : a->entries) {
    if (depth_of(pointer) > depth) continue;
    seen[pointer] = true;
    const auto it = in_b.find(pointer);
    if (it == in_b.end() || it->second != digest) differ.push_back(pointer);
  }
  for (const auto& [pointer, digest] : b->entries) {
    if (depth_of(pointer) <= depth && !seen.count(pointer)) differ.push_back(pointer);
  }
  // The deepest only: a container differs whenever one of its members does.
  std::vector<std::string> deepest;
  for (const std::string& p : differ) {
    const bool has_child = std::any_of(differ.begin(), differ.end(), [&p](const std::string& q) {
      return q.size() > p.size() + 1 && q.compare(0, p.size(), p) == 0 && q[p.size()] == '/';
    });
    if (!has_child) deepest.push_back(pointer_text(p));
  }
  return deepest;
}

}  // namespace idem::json
