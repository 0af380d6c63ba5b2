// Byte-level helpers of the strict parser: character classes, the 8-byte scan for special
// bytes in strings, and UTF-8 encoding of decoded escapes.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

namespace idem::json::detail {

// Byte classes. String: 1 for bytes copied as they are (U+0020..U+007F but '"' and '\\').
// Whitespace: the four RFC 8259 allows.
constexpr std::array<bool, 256> make_plain() {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
  return t;
}
inline constexpr std::array<bool, 256> kPlain = make_plain();

constexpr std::array<bool, 256> make_space() {
  std::array<bool, 256> t{};
  t[' '] = t['\t'] = t['\n'] = t['\r'] = true;
  return t;
}
inline constexpr std::array<bool, 256> kSpace = make_space();

// The end of the UTF-8 sequence whose lead byte (>= 0x80) is at `q`, by RFC 3629's ranges: no
// overlong form, no encoded surrogate, nothing above U+10FFFF; nullptr when it is ill-formed or
// cut short by `end`, with `bad` at the byte at fault (the lead, a continuation, or `end`). The
// parser's strings and the member digests' names (member_digests.cpp).
inline const char* utf8_sequence_end(const char* q, const char* end, const char*& bad) {
  const unsigned char c = static_cast<unsigned char>(*q);
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  int continuation = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    continuation = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    continuation = 2;
    if (c == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (c == 0xED) hi = 0x9F;  // U+D800..U+DFFF
  } else if (c >= 0xF0 && c <= 0xF4) {
    continuation = 3;
    if (c == 0xF0) lo = 0x90;  // overlong below U+10000
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    bad = q;
    return nullptr;
  }
  ++q;
  for (int i = 0; i < continuation; ++i, ++q) {
    const unsigned char b = q == end ? 0 : static_cast<unsigned char>(*q);
    if (q == end || b < lo || b > hi) {
      bad = q;
      return nullptr;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  return q;
}

// True when one of the 8 bytes at `p` is '"', '\\', below 0x20 or above 0x7F (SWAR: the
// zero-byte test (v - 0x01..) & ~v & 0x80.. has no false negatives, only false positives after a
// true hit, and the byte loop that follows sorts those out).
inline bool has_special_byte(const char* p) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t backslash = w ^ (kOnes * '\\');
  const std::uint64_t hits = (w | ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
                              ((backslash - kOnes) & ~backslash)) &
                             kHigh;
  return hits != 0;
}

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Out: std::string or Bytes (bytes.hpp), anything with push_back(char) and append(ptr, n).
template <class Out>
inline void append_utf8(Out& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    const char b[2] = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(b, 2);
  } else if (cp < 0x10000) {
    const char b[3] = {static_cast<char>(0xE0 | (cp >> 12)),
                       static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                       static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(b, 3);
  } else {
    const char b[4] = {
        static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
        static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
    out.append(b, 4);
  }
}

}  // namespace idem::json::detail
