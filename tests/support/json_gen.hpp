// Generated JSON documents for the differential tests (tests/core/parser_differential_test.cpp,
// tests/core/canonical_text_test.cpp) and the old-against-new check of scripts: valid documents
// (nested objects and arrays, escapes, non-ASCII, numbers at the edges of the double range,
// duplicate names, deep nesting) and mutations of them, from a SplitMix64 seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json/parser.hpp"
#include "tests/support/split_mix64.hpp"

namespace idem::testing {

using Rng = SplitMix64;

// clang-format off
inline const char* const kStringPieces[] = {
    "a", "id", "name", "x y", "Crêpes", "São Paulo", "€", "😂", "\xEF\xBF\xBF", "\\n", "\\\"",
    "\\\\", "\\/", "\\b\\f\\r\\t", "\\u00e9", "\\u0000", "\\u001f", "\\ud83d\\ude02", "\\uFFFF",
    "\\u0061", "\x7F", "日本語", "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF", "k", "0"};
inline const char* const kNumbers[] = {
    "0", "-0", "1", "-12", "4.50", "1E30", "1e-7", "-0.0", "9007199254740993",
    "18446744073709551616", "-9223372036854775809", "1.5e-3", "123456789012345678901234567890",
    "1e400", "-1e400", "1e-400", "2.5E+10", "0.1", "333333333.33333329", "1.7976931348623157e308",
    "1.7976931348623159e308", "4.9e-324", "1e308", "100", "0e0", "-0E-0", "12.34e-5"};
inline const char* const kSpaces[] = {
    "", "", "", " ", "\n", "\t", "\r\n  "};
inline const char* const kInserts[] = {
    ",", "0", "00", "-", ".", "e", "+", "\\", "\\u", "\\ud800", "\\udc00", "\\x", "\\u12", "\"",
    "'", ":", "[", "]", "{", "}", "é", "😂", "\x80", "\xC0\xAF", "\xC3", "\xED\xA0\x80",
    "\xF4\x90\x80\x80", "\xF5", "\xFF", "\xE0\x80\x80", "\xF0\x80", "\xEF\xBB\xBF", "\t", "\x01",
    "\x1F", "" /* a NUL byte */, "//", "/*", "NaN", "true", "nul", "1e", "1e+", "-I", " ",
    "\"a\":1", ",\"a\":2"};
// clang-format on

inline void gen_string(Rng& rng, std::string& out) {
  out += '"';
  const std::size_t n = rng.below(5);
  for (std::size_t i = 0; i < n; ++i) out += rng.pick(kStringPieces);
  out += '"';
}

inline void gen_value(Rng& rng, std::string& out, int depth) {
  const std::size_t kind = depth > 6 ? rng.below(5) : rng.below(8);
  switch (kind) {
    case 0: out += rng.pick(kNumbers); break;
    case 1: gen_string(rng, out); break;
    case 2: out += rng.chance(2) ? "true" : "false"; break;
    case 3: out += "null"; break;
    case 4: out += std::to_string(static_cast<std::int64_t>(rng.next() >> rng.below(64))); break;
    case 5:
    case 6: {
      out += '{';
      const std::size_t n = rng.below(6);
      for (std::size_t i = 0; i < n; ++i) {
        if (i != 0) out += ',';
        out += rng.pick(kSpaces);
        gen_string(rng, out);  // names repeat now and then: duplicates
        out += rng.pick(kSpaces);
        out += ':';
        out += rng.pick(kSpaces);
        gen_value(rng, out, depth + 1);
      }
      out += rng.pick(kSpaces);
      out += '}';
      break;
    }
    default: {
      out += '[';
      const std::size_t n = rng.below(6);
      for (std::size_t i = 0; i < n; ++i) {
        if (i != 0) out += ',';
        out += rng.pick(kSpaces);
        gen_value(rng, out, depth + 1);
      }
      out += ']';
      break;
    }
  }
}

inline std::string gen_document(Rng& rng) {
  std::string doc = rng.pick(kSpaces);
  if (rng.chance(40)) {  // near the depth limit
    const std::size_t depth = json::kMaxDepth - 2 + rng.below(4);
    for (std::size_t i = 0; i < depth; ++i) doc += rng.chance(2) ? "[" : "{\"k\":";
    return doc;  // unterminated, or mutated below
  }
  gen_value(rng, doc, 0);
  doc += rng.pick(kSpaces);
  return doc;
}

inline std::string mutate(Rng& rng, std::string doc) {
  const std::size_t edits = 1 + rng.below(3);
  for (std::size_t e = 0; e < edits; ++e) {
    const std::size_t at = doc.empty() ? 0 : rng.below(doc.size() + 1);
    switch (rng.below(5)) {
      case 0:  // flip a byte to anything
        if (at < doc.size()) doc[at] = static_cast<char>(rng.below(256));
        break;
      case 1: doc.resize(at); break;  // truncate
      case 2:
        if (at < doc.size()) doc.erase(at, 1);
        break;
      default: {  // insert something interesting
        const char* piece = rng.pick(kInserts);
        doc.insert(at, *piece == '\0' ? std::string(1, '\0') : std::string(piece));
        break;
      }
    }
  }
  return doc;
}

// Hand-picked edges: every kind of refusal at its boundary, and a few accepted neighbours.
inline std::vector<std::string> edge_cases() {
  return {"",
                               " ",
                               "\xEF",
                               "\xEF\xBB",
                               "\xEF\xBB\xBF",
                               "\xEF x",
                               "\xEF\xBB x",
                               "[",
                               "{",
                               "]",
                               "}",
                               "[1,]",
                               "{\"a\":1,}",
                               "{\"a\" 1}",
                               "{\"a\":}",
                               "{,}",
                               "[,]",
                               "{1:2}",
                               "{\"a\":1 /* c */}",
                               "[1] // c",
                               "01",
                               "-01",
                               "[-01]",
                               "1.",
                               ".5",
                               "+1",
                               "-",
                               "-a",
                               "1e",
                               "1e+",
                               "1E-x",
                               "0.e1",
                               "NaN",
                               "Infinity",
                               "[-Infinity]",
                               "tru",
                               "truex",
                               "nul",
                               "nulL",
                               "fals",
                               "\"\\ud800\"",
                               "\"\\udc00\"",
                               "\"\\ud800\\u0041\"",
                               "\"\\ud800\\n\"",
                               "\"\\ud800\\",
                               "\"\\ud800\\u12",
                               "\"\\u12g4\"",
                               "\"\\",
                               "\"\\x\"",
                               "\"a\tb\"",
                               "\"abc",
                               "\"\xC3\"",
                               "\"\xC3",
                               "\"\xE0\x80\x80\"",
                               "\"\xED\xA0\x80\"",
                               "\"\xF4\x90\x80\x80\"",
                               "\"\xF0\x9F\x98\"",
                               "\"\xFF\"",
                               "\"\x7F\"",
                               "{} {}",
                               "1 2",
                               "[1] true",
                               "{} x",
                               "[1",
                               "{\"a\":1,\"a\":2}",
                               "{\"a\":{},\"a\":[]}",
                               "1e400",
                               "-1e400",
                               "1e-400",
                               "[1e309]",
                               "{\"a\":[1,{\"b\":1e999}]}",
                               "1.7976931348623158e308",
                               "1.7976931348623159e308",
                               "123e-2147483649",
                               "0e99999999999999999999",
                               std::string(309, '9'),
                               std::string(400, '1'),
                               "[" + std::string(310, '9') + "]",
                               std::string("1\0", 2),
                               std::string("[\0]", 3),
                               std::string("\"\0\"", 3),
                               std::string(json::kMaxDepth, '[') + std::string(json::kMaxDepth, ']'),
                               std::string(json::kMaxDepth + 1, '[') + std::string(json::kMaxDepth + 1, ']'),
                               "[" + std::string(json::kMaxDepth, '[') + "]"};
}

}  // namespace idem::testing
