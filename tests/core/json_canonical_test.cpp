// canonicalize and require_exact_numbers: member order by UTF-16 code units, escapes, numbers,
// and the pointer named when a number is inexact.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"

namespace idem::json {
namespace {

std::string canon(const std::string& text) { return canonicalize(parse_strict(text)); }

// UTF-8 to UTF-16, for an independent oracle of the member order.
std::u16string to_utf16(const std::string& s) {
  std::u16string out;
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < len; ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
    i += len;
  }
  return out;
}

std::string to_utf8(std::uint32_t cp) {
  std::string out;
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
  return out;
}

TEST(Canonicalize, SortsSupplementaryCharactersBeforePrivateUse) {
  // UTF-8 bytes put U+E000 (EE 80 80) before U+1F602 (F0 9F 98 82); UTF-16 puts D83D first.
  EXPECT_EQ(canon(R"({"\ue000":1,"\ud83d\ude02":2,"\uffff":3,"\u00e9":4,"a":5,"":6,"aa":7})"),
            "{\"\":6,\"a\":5,\"aa\":7,\"\xC3\xA9\":4,\"\xF0\x9F\x98\x82\":2,\"\xEE\x80\x80\":1,"
            "\"\xEF\xBF\xBF\":3}");
}

TEST(Canonicalize, OrderMatchesUtf16ForRandomNames) {
  std::mt19937 rng(8785);
  const std::uint32_t pools[][2] = {{0x20, 0x7F}, {0x80, 0x7FF}, {0xD000, 0xD7FF},
                                    {0xE000, 0xFFFF}, {0x10000, 0x10FFFF}};
  for (int round = 0; round < 50; ++round) {
    TreeBuilder b;
    b.begin_object();
    std::vector<std::string> names;
    const int members = 1 + static_cast<int>(rng() % 60);  // both sides of the small-object path
    while (static_cast<int>(names.size()) < members) {
      std::string name;
      const int length = static_cast<int>(rng() % 4);
      for (int k = 0; k < length; ++k) {
        const auto& pool = pools[rng() % 5];
        const std::uint32_t cp = pool[0] + rng() % (pool[1] - pool[0] + 1);
        if (cp == '"' || cp == '\\') continue;  // keeps the expected text free of escapes
        name += to_utf8(cp);
      }
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      names.push_back(name);
      b.key(name);
      b.null();
    }
    b.end_object();
    std::sort(names.begin(), names.end(), [](const std::string& x, const std::string& y) {
      return to_utf16(x) < to_utf16(y);
    });
    std::string expected = "{";
    for (const std::string& name : names) {
      if (expected.size() > 1) expected += ',';
      expected += "\"" + name + "\":null";
    }
    expected += "}";
    ASSERT_EQ(canonicalize(b.finish()), expected) << "round " << round;
  }
}

TEST(Canonicalize, EscapesOnlyWhatRfc8785Requires) {
  std::string all_controls = "\"";
  for (int c = 0; c < 0x20; ++c) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\u%04X", c);
    all_controls += hex;
  }
  all_controls += "\"";
  EXPECT_EQ(canon(all_controls),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r"
            "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018"
            "\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\"");
  EXPECT_EQ(canon(R"("\"\\\/\u007f\u2028<>&'")"),
            "\"\\\"\\\\/\x7F\xE2\x80\xA8<>&'\"");
}

TEST(Canonicalize, DropsWhitespaceAndKeepsArrayOrder) {
  EXPECT_EQ(canon(" [ 3 , { \"b\" : [ ] , \"a\" : { } } , null , true , false , \"\" ] "),
            R"([3,{"a":{},"b":[]},null,true,false,""])");
}

TEST(Canonicalize, RoundsNumbersLikeJcs) {
  EXPECT_EQ(canon("[333333333.33333329, 1E30, 4.50, 2e-3, 9007199254740993, -0, 1e-400]"),
            "[333333333.3333333,1e+30,4.5,0.002,9007199254740992,0,0]");
}

TEST(Canonicalize, LargeObjectsSortToo) {
  std::string doc = "{";
  for (int i = 99; i >= 0; --i) {
    doc += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + (i != 0 ? "," : "}");
  }
  const std::string out = canon(doc);
  EXPECT_EQ(out.substr(0, 24), R"({"k0":0,"k1":1,"k10":10,)");
  EXPECT_EQ(out.substr(out.size() - 18), R"("k98":98,"k99":99})");
}

std::string precision_message(const std::string& text) {
  try {
    require_exact_numbers(parse_strict(text));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NumberPrecision);
    EXPECT_EQ(e.hint(), "send it as a string or reduce its precision");
    return e.what();
  }
  return "";
}

TEST(RequireExactNumbers, AcceptsExactSpellings) {
  EXPECT_EQ(precision_message(R"({"a":[4.50, 1E30, 0.1, -0, 9007199254740992, 1e-7]})"), "");
}

TEST(RequireExactNumbers, NamesThePointerOfTheFirstInexactNumber) {
  EXPECT_EQ(precision_message(R"({"id":1,"amount":9007199254740993})"),
            "ERR_PAYLOAD_NUMBER_PRECISION: number 9007199254740993 at /amount cannot be "
            "represented exactly as an IEEE double");
  EXPECT_EQ(precision_message(R"({"numbers":[1, 333333333.33333329, 1e-400]})"),
            "ERR_PAYLOAD_NUMBER_PRECISION: number 333333333.33333329 at /numbers/1 cannot be "
            "represented exactly as an IEEE double");
  EXPECT_EQ(precision_message(R"({"a/b~c":[{"x":0.1000000000000000000001}]})"),
            "ERR_PAYLOAD_NUMBER_PRECISION: number 0.1000000000000000000001 at /a~1b~0c/0/x "
            "cannot be represented exactly as an IEEE double");
  EXPECT_EQ(precision_message("12345678901234567890"),
            "ERR_PAYLOAD_NUMBER_PRECISION: number 12345678901234567890 at \"\" (the document) "
            "cannot be represented exactly as an IEEE double");
}

}  // namespace
}  // namespace idem::json
