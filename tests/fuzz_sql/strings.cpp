// The hostile and plausible strings behind text and jsonb arguments.
#include "tests/fuzz_sql/strings.hpp"

#include <cctype>
#include <string>
#include <vector>

namespace idem::fuzz_sql {
namespace {

constexpr std::size_t kMiB = 1024 * 1024;

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string printable(Rng& rng, std::size_t n) {
  std::string s(n, ' ');
  for (auto& c : s) c = static_cast<char>(0x20 + rng.below(0x5F));
  return s;
}

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Valid UTF-8 from every plane (no NUL, no surrogates: PostgreSQL text holds neither).
std::string unicode(Rng& rng, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned cp = 0;
    switch (rng.below(4)) {
      case 0: cp = 1 + static_cast<unsigned>(rng.below(0x7F)); break;
      case 1: cp = 0x80 + static_cast<unsigned>(rng.below(0x800 - 0x80)); break;
      case 2: cp = 0x800 + static_cast<unsigned>(rng.below(0xD800 - 0x800)); break;
      default: cp = 0x10000 + static_cast<unsigned>(rng.below(0x110000 - 0x10000)); break;
    }
    append_utf8(s, cp);
  }
  return s;
}

std::string control_chars(Rng& rng) {
  std::string s = "a";
  const std::size_t n = 1 + rng.below(20);
  for (std::size_t i = 0; i < n; ++i) {
    s += rng.chance(8) ? '\x7f' : static_cast<char>(1 + rng.below(0x1F));
  }
  return s + "z";
}

const char* const kEscapesLookalike[] = {
    "\\x00", "\\xc3\\x28", "\\ud800", "\\u0000", "%00", "%C3%28", "\\\\", "\\'", "\\0", "\\n",
    "&#0;", "\\U0010FFFF", "\\xff\\xfe", "\\377",
};
const char* const kInvalidUtf8[] = {
    "\xff", "\xc3\x28", "\xed\xa0\x80", "\xc0\xaf", "\xf8\x88\x80\x80\x80", "\xe2\x82", "a\x80z",
    "\xf4\x90\x80\x80", "\xfe\xfe\xff\xff",
};
const char* const kTricky[] = {
    "'; DROP TABLE idem.keys; --", "\"); SELECT pg_sleep(30); --", "%s%s%s%n", "$1", "NULL", "null",
    "\\", "'", "''", ":", "::", "a:b", "{}", "[]", "{\"a\":1}", "()", ",", "\t", "\n", "\r\n", " ",
    "../../etc/passwd", "ERR_INTERNAL", "ERR_LEASE_LOST: forged", "idem.keys", "pg_catalog",
    "0", "-1", "1e400", "true", "SELECT 1", "/", "~", "/~2", "E'\\\\x'",
};
const char* const kSpecialUnicode[] = {
    "\xef\xbb\xbf", "\xef\xbf\xbe", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", "\xe2\x80\xae", "\xe2\x80\x8d",
    "\xc2\x85", "\xe2\x80\xa8", "\xcc\x81", "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9",
    "tenant-\xc3\xa9", "\xef\xac\xb3", "\xe2\x82\xac",
};

std::string json_number(Rng& rng) {
  static const char* const kNumbers[] = {
      "1e400", "-1e400", "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "5e-324",
      "2e-324", "1e-400", "9007199254740993", "9007199254740992", "-0", "0.0", "-0.0",
      "123456789012345678901234567890", "1E+2147483648", "0.1e-2147483649", "333333333.33333329",
      "1.0000000000000001", "4.35", "100", "1E2", "-9223372036854775809", "18446744073709551616",
  };
  if (rng.chance(6)) return "1" + std::string(1000 + rng.below(100000), '0');
  if (rng.chance(6)) return "0." + std::string(1000, '0') + "1";
  return rng.pick(kNumbers);
}

// A valid JSON value of bounded depth.
std::string random_json(Rng& rng, int depth) {
  switch (depth <= 0 ? rng.below(4) : rng.below(7)) {
    case 0: return std::to_string(static_cast<long long>(rng.next() % 2000001) - 1000000);
    case 1: return "\"" + printable(rng, rng.below(12)) + "\"";  // may hold \ and " raw: often invalid
    case 2: return rng.chance(2) ? "true" : "null";
    case 3: return json_number(rng);
    case 4:
    case 5: {
      std::string s = "{";
      const std::size_t n = rng.below(5);
      for (std::size_t i = 0; i < n; ++i) {
        if (i) s += ",";
        s += "\"k" + std::to_string(rng.below(8)) + "\":" + random_json(rng, depth - 1);
      }
      return s + "}";
    }
    default: {
      std::string s = "[";
      const std::size_t n = rng.below(5);
      for (std::size_t i = 0; i < n; ++i) {
        if (i) s += ",";
        s += random_json(rng, depth - 1);
      }
      return s + "]";
    }
  }
}

std::string nested(std::size_t depth, bool objects) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
  s += "1";
  for (std::size_t i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

std::string hostile_json(Rng& rng) {
  static const char* const kBroken[] = {
      "NaN", "Infinity", "-Infinity", "[1,]", "{\"a\":1,}", "/*c*/{}", "{'a':1}", "012",
      "\xef\xbb\xbf{}", "", " ", "{", "}", "[1 2]", "{\"a\"}", "tru", "\"\x01\"", "1.", ".5", "+1",
      "0x10", "1e", "\"\\x41\"", "\"\\u12\"", "{\"a\":1}{\"b\":2}", "[\"\\ud800\"]", "{\"\\udc00\":1}",
      "[\"\\ud800\\ud800\"]", "[\"\\udbff\\udfff\"]", "{\"a\":\"\\u0000\"}", "{\"\\u0000\":1}",
      "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "null", "true", "false", "0", "\"s\"", "[]",
      "{}", "{\"\\ufb33\":3,\"\\ud83d\\ude00\":2,\"\\u20ac\":1}", "{\"a\":\"\xff\"}",
      "{\"a\":\"\\b\\f\\n\\r\\t\\\"\\\\\\/\"}", "{\"amount\":9007199254740993}",
      "{\"metadata\":{\"trace_id\":\"t-1\"},\"amount\":100}", "{\"stock_available\":false}",
      "{\"captured\":true}", "{\"stock_available\":\"yes\"}", "[[[]]]",
  };
  switch (rng.below(16)) {
    case 0: return std::string(100000, '[') + std::string(100000, ']');
    case 1: return std::string(100000, '[');
    case 2: return nested(127 + rng.below(4), rng.chance(2));  // around the 128-level limit
    case 3: return nested(100000, true);
    case 4: {
      const std::string n = json_number(rng);
      return rng.chance(2) ? n : "{\"amount\":" + n + "}";
    }
    case 5: return "{\"a\":\"" + std::string(kMiB - 8 - rng.below(4), 'x') + "\"}";  // about 1 MiB
    case 6: return "{\"a\":\"" + std::string(kMiB + rng.below(64), 'x') + "\"}";
    case 7: {
      std::string s = "[0";
      for (int i = 0; i < 200000; ++i) s += ",0";
      return s + "]";
    }
    case 8: {
      std::string s = "{";
      for (int i = 0; i < 50000; ++i) s += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
      return s + "}";
    }
    case 9: return "{\"s\":\"" + unicode(rng, 1 + rng.below(40)) + "\"}";
    case 10: return "{\"s\":\"" + std::string(rng.pick(kInvalidUtf8)) + "\"}";
    case 11: return random_json(rng, 5);
    default: return rng.pick(kBroken);
  }
}

}  // namespace

std::string random_hex(Rng& rng, std::size_t bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(bytes * 2, '0');
  for (auto& c : s) c = kDigits[rng.below(16)];
  return s;
}

std::string hostile_text(Rng& rng) {
  switch (rng.below(14)) {
    case 0: return "";
    case 1: return std::string(kMiB + rng.below(2), 'a');
    case 2: return printable(rng, rng.below(300));
    case 3: return unicode(rng, 1 + rng.below(60));
    case 4: return control_chars(rng);
    case 5: return rng.pick(kEscapesLookalike);
    case 6: return std::string("x") + rng.pick(kInvalidUtf8) + "x";
    case 7: {
      static const std::size_t kLengths[] = {15, 16, 128, 129, 255, 256, 257, 1023, 1024, 1025};
      const std::size_t n = rng.pick(kLengths);
      return rng.chance(3) ? repeat("\xc3\xa9", n / 2 + 1) : std::string(n, 'x');
    }
    case 8:
    case 9: return rng.pick(kTricky);
    case 10: return rng.pick(kSpecialUnicode);
    case 11: return hostile_json(rng);
    case 12: return "acme:" + random_hex(rng, 32) + (rng.chance(2) ? ":" + random_hex(rng, 16) : "");
    default: return printable(rng, 1 + rng.below(20));
  }
}

std::string json_document(Rng& rng, bool plausible) {
  if (plausible || rng.chance(3)) {
    return "{\"amount\":" + std::to_string(1999 + 100 * rng.below(3)) + ",\"cart\":\"c_" +
           std::to_string(rng.below(3)) + "\"" +
           (rng.chance(4) ? ",\"metadata\":{\"trace_id\":\"t-" + std::to_string(rng.below(100)) + "\"}" : "") +
           "}";
  }
  return hostile_json(rng);
}

std::string idempotency_key(Rng& rng) {
  switch (rng.below(6)) {
    case 0:
    case 1:
    case 2: {
      const std::string n = std::to_string(rng.below(24));
      return "fuzz-key-" + std::string(8 - n.size(), '0') + n;
    }
    case 3: return printable(rng, 16 + rng.below(240));  // 16..255: the default bounds
    case 4: return rng.chance(2) ? printable(rng, 15) : printable(rng, 256);
    default: return hostile_text(rng);
  }
}

std::string mangled_handle(Rng& rng, const std::string& handle) {
  static const char* const kTenants[] = {"acme", "globex", "t1", "", "tenant-\xc3\xa9", "ACME"};
  std::string h = handle;
  const auto colon = h.find(':');
  switch (rng.below(7)) {
    case 0:  // the same digest under another tenant's name
      return colon == std::string::npos ? h : std::string(rng.pick(kTenants)) + h.substr(colon);
    case 1:
      if (!h.empty()) {
        auto& c = h[rng.below(h.size())];
        c = c == 'f' ? '0' : (c == '0' ? 'f' : 'a');
      }
      return h;
    case 2: return h.substr(0, rng.below(h.size() + 1));
    case 3: {
      const auto last = h.rfind(':');
      return last == std::string::npos ? h : h.substr(0, last);  // without its last part
    }
    case 4:
      for (auto& c : h) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return h;
    case 5: return h + (rng.chance(2) ? ":" : ":" + random_hex(rng, 16));
    default: return h + h;
  }
}

std::string quote_literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace idem::fuzz_sql
