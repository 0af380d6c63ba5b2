// RFC 8785 building blocks shared by the tree canonicalizer (canonical.cpp) and the one-pass
// fingerprint writer (canonical_text.cpp): the member order and the string form.
// Internal header: include it only from core/json/*.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace idem::json::detail {

// UTF-16 code-unit order of two UTF-8 strings. Bytewise UTF-8 order is code point order, and the
// two orders disagree only when a supplementary character (lead byte F0..F4; a D800..DBFF
// surrogate in UTF-16) meets one in U+E000..U+FFFF (lead byte EE or EF): UTF-16 puts the
// supplementary one first. Where the strings first differ both bytes are lead bytes or both are
// continuation bytes of characters with the same lead, so one look at that pair is enough.
inline bool utf16_less(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size();
  const unsigned char x = static_cast<unsigned char>(a[i]);
  const unsigned char y = static_cast<unsigned char>(b[i]);
  if (x >= 0xF0 && (y == 0xEE || y == 0xEF)) return true;
  if (y >= 0xF0 && (x == 0xEE || x == 0xEF)) return false;
  return x < y;
}

// For each byte: 0 to copy it, else the letter after the backslash ('u' for \u00XX).
// RFC 8785 section 3.2.2.2: only '"', '\\' and U+0000..U+001F are escaped.
constexpr std::array<char, 256> make_escapes() {
  std::array<char, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = 'u';
  table['\b'] = 'b';
  table['\f'] = 'f';
  table['\n'] = 'n';
  table['\r'] = 'r';
  table['\t'] = 't';
  table['"'] = '"';
  table['\\'] = '\\';
  return table;
}
inline constexpr std::array<char, 256> kEscapes = make_escapes();

// The RFC 8785 escape of a byte that needs one ('"', '\\' or a control character).
template <class Out>
inline void append_canonical_escape(Out& out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  const char escape = kEscapes[c];
  if (escape == 'u') {
    const char hex[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
    out.append(hex, 6);
  } else {
    const char two[2] = {'\\', escape};
    out.append(two, 2);
  }
}

// True when one of the 8 bytes at `p` needs an escape ('"', '\\', below 0x20). SWAR as in
// lexical.hpp's has_special_byte, without its test for bytes above 0x7F, which are copied: no
// false negatives, false positives only after a true hit in the same word.
inline bool has_escape_byte(const char* p) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t backslash = w ^ (kOnes * '\\');
  return ((((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash)) &
          kHigh) != 0;
}

// Whether a decoded string has a byte RFC 8785 escapes.
inline bool needs_escape(std::string_view s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  while (end - p >= 8) {
    if (has_escape_byte(p)) break;
    p += 8;
  }
  for (; p != end; ++p) {
    if (kEscapes[static_cast<unsigned char>(*p)] != 0) return true;
  }
  return false;
}

// A decoded string's RFC 8785 form without its quotes. Out: std::string or Bytes (bytes.hpp).
// Words of 8 bytes without a byte to escape are skipped whole.
template <class Out>
inline void append_string_body(Out& out, std::string_view s) {
  const char* run = s.data();  // start of the bytes not yet copied
  const char* const end = s.data() + s.size();
  for (const char* p = run; p != end;) {
    if (end - p >= 8 && !has_escape_byte(p)) {
      p += 8;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(*p++);
    if (kEscapes[c] == 0) continue;
    out.append(run, static_cast<std::size_t>(p - 1 - run));
    append_canonical_escape(out, c);
    run = p;
  }
  out.append(run, static_cast<std::size_t>(end - run));
}

// A string's RFC 8785 form, quotes included.
template <class Out>
inline void append_string(Out& out, std::string_view s) {
  out.push_back('"');
  append_string_body(out, s);
  out.push_back('"');
}

}  // namespace idem::json::detail
