// parse_strict and TreeBuilder: what is accepted, how it is stored, and every refusal with the
// byte offset its message names.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"

namespace idem::json {
namespace {

// The error thrown by `f`, failing the test if there is none.
template <typename F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no idem::Error thrown";
  return Error(ErrorCode::Internal, "no error");
}

// True when `message` says "at byte N" for exactly this N (not N followed by more digits).
bool names_byte(const std::string& message, std::size_t offset) {
  const std::string needle = "at byte " + std::to_string(offset);
  for (std::size_t at = message.find(needle); at != std::string::npos;
       at = message.find(needle, at + 1)) {
    const std::size_t end = at + needle.size();
    if (end == message.size() || message[end] < '0' || message[end] > '9') return true;
  }
  return false;
}

TEST(ParseStrict, KeepsNumberSpellingsAndMemberOrder) {
  const Value v = parse_strict(
      R"({"z": 4.50, "a": [1E30, -0.0, 9007199254740993, -12, 18446744073709551616, 0]})");
  ASSERT_EQ(v.kind, Kind::Object);
  ASSERT_EQ(v.keys, (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(v.items[0].kind, Kind::Number);
  EXPECT_EQ(v.items[0].text, "4.50");
  const Value& a = v.items[1];
  ASSERT_EQ(a.kind, Kind::Array);
  ASSERT_EQ(a.items.size(), 6u);
  EXPECT_EQ(a.items[0].text, "1E30");
  EXPECT_EQ(a.items[1].text, "-0.0");
  EXPECT_EQ(a.items[2].text, "9007199254740993");
  EXPECT_EQ(a.items[3].text, "-12");
  EXPECT_EQ(a.items[4].text, "18446744073709551616");
  EXPECT_EQ(a.items[5].text, "0");
}

TEST(ParseStrict, DecodesStringsToUtf8) {
  const Value v = parse_strict(R"(["\u00e9\ud83d\ude02\n\"\/", "é"])");
  EXPECT_EQ(v.items[0].text, "\xC3\xA9\xF0\x9F\x98\x82\n\"/");
  EXPECT_EQ(v.items[1].text, "\xC3\xA9");
  EXPECT_EQ(parse_strict(R"("a\u0000b")").text, std::string("a\0b", 3));
}

TEST(ParseStrict, AcceptsScalarsAndWhitespace) {
  EXPECT_EQ(parse_strict(" \t\r\nnull \n").kind, Kind::Null);
  EXPECT_EQ(parse_strict("true").kind, Kind::True);
  EXPECT_EQ(parse_strict("false").kind, Kind::False);
  EXPECT_EQ(parse_strict("\"x\"").text, "x");
  EXPECT_EQ(parse_strict("-1.5e-3").text, "-1.5e-3");
  EXPECT_EQ(parse_strict("{}").kind, Kind::Object);
  EXPECT_EQ(parse_strict("[]").kind, Kind::Array);
}

struct Refusal {
  const char* name;
  std::string input;
  std::size_t offset;
};

class ParseStrictRefuses : public ::testing::TestWithParam<Refusal> {};

TEST_P(ParseStrictRefuses, WithJsonInvalidAndTheByteOffset) {
  const Refusal& r = GetParam();
  const Error e = error_of([&] { parse_strict(r.input); });
  EXPECT_EQ(e.code(), ErrorCode::JsonInvalid) << e.what();
  EXPECT_TRUE(names_byte(e.what(), r.offset)) << e.what();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseStrictRefuses,
    ::testing::Values(
        Refusal{"InvalidUtf8Byte", "[\"a\xFF\"]", 3},
        Refusal{"TruncatedUtf8", "\"a\xC3\"", 3},
        Refusal{"OverlongUtf8", "\"\xC0\xAF\"", 1},
        Refusal{"Utf8Surrogate", "\"\xED\xA0\x80\"", 2},
        Refusal{"LoneHighSurrogateEscape", R"("\ud800")", 7},
        Refusal{"HighSurrogateThenBmpEscape", R"("\ud800\u0041")", 12},
        Refusal{"LoneLowSurrogateEscape", R"("x\udc00")", 7},
        Refusal{"DuplicateName", R"({"a":1,"a":2})", 7},
        Refusal{"DuplicateNameViaEscape", R"({"a":1, "\u0061":2})", 8},
        Refusal{"DuplicateNameNested", R"({"a":1, "b":{"x":1,"x":2}})", 19},
        Refusal{"DuplicateNameAfterSpaces", "{ \"a\" : 1 ,\n \"a\" : 2 }", 13},
        Refusal{"DuplicateNameAfterObject", R"({"a":{} , "a":1})", 10},
        Refusal{"TrailingCommaArray", "[1,]", 3},
        Refusal{"TrailingCommaObject", R"({"a":1,})", 7},
        Refusal{"BlockComment", "/*c*/1", 0},
        Refusal{"LineComment", "[1, // c\n2]", 4},
        Refusal{"LeadingZero", "01", 1},
        Refusal{"LeadingZeroInArray", "[-01]", 3},
        Refusal{"NaN", "[NaN]", 1},
        Refusal{"Infinity", "[Infinity]", 1},
        Refusal{"NegativeInfinity", "-Infinity", 1},
        Refusal{"RawControlChar", "\"a\x01\"", 2},
        Refusal{"RawTab", "\"\t\"", 1},
        Refusal{"TrailingGarbage", "{} x", 3},
        Refusal{"TrailingValue", "[1] true", 4},
        Refusal{"TwoNumbers", "1 2", 2},
        Refusal{"Empty", "", 0},
        Refusal{"OnlySpaces", "   ", 3},
        Refusal{"Unterminated", "[1,2", 4},
        Refusal{"UnterminatedString", "\"abc", 4},
        Refusal{"MissingColon", R"({"a" 1})", 5},
        Refusal{"NonStringKey", "{1:2}", 1},
        Refusal{"SingleQuotes", "['a']", 1},
        Refusal{"LeadingPlus", "+1", 0},
        Refusal{"BareFraction", ".5", 0},
        Refusal{"DotWithoutDigits", "1.", 2},
        Refusal{"ByteOrderMark", "\xEF\xBB\xBF{}", 0},
        Refusal{"TooDeepArrays", std::string(kMaxDepth + 1, '['), kMaxDepth},
        Refusal{"TooDeepObjects", [] {
                  std::string s;
                  for (std::size_t i = 0; i <= kMaxDepth; ++i) s += "{\"a\":";
                  return s;
                }(), 5 * kMaxDepth}),
    [](const ::testing::TestParamInfo<Refusal>& info) { return std::string(info.param.name); });

TEST(ParseStrict, AcceptsExactlyTheMaximumDepth) {
  const std::string doc = std::string(kMaxDepth, '[') + std::string(kMaxDepth, ']');
  EXPECT_EQ(canonicalize(parse_strict(doc)), doc);
}

TEST(ParseStrict, DuplicateInLargeObjectIsFound) {
  std::string doc = "{";
  for (int i = 0; i < 100; ++i) doc += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  const std::size_t dup_offset = doc.size();
  doc += "\"k42\":0}";
  const Error e = error_of([&] { parse_strict(doc); });
  EXPECT_EQ(e.code(), ErrorCode::JsonInvalid);
  EXPECT_EQ(std::string(e.what()),
            "ERR_PAYLOAD_JSON_INVALID: duplicate member name \"k42\" at byte " +
                std::to_string(dup_offset));
}

TEST(ParseStrict, NumberBeyondDoubleRangeIsAPrecisionError) {
  const Error e = error_of([] { parse_strict(R"({"a":{"b":[1, {"c~/":-1e400}]}})"); });
  EXPECT_EQ(e.code(), ErrorCode::NumberPrecision);
  EXPECT_EQ(std::string(e.what()),
            "ERR_PAYLOAD_NUMBER_PRECISION: number -1e400 at /a/b/1/c~0~1 (byte 21) is too large "
            "for an IEEE double");
  EXPECT_EQ(error_of([] { parse_strict("1e400"); }).what(),
            std::string("ERR_PAYLOAD_NUMBER_PRECISION: number 1e400 at \"\" (the document) "
                        "(byte 0) is too large for an IEEE double"));
}

TEST(TreeBuilder, NextPointerNamesWhereTheNextValueGoes) {
  TreeBuilder b;
  EXPECT_EQ(b.next_pointer(), "");
  b.begin_array();
  EXPECT_EQ(b.next_pointer(), "/0");
  b.null();
  b.begin_object();
  b.key("a/b");
  EXPECT_EQ(b.next_pointer(), "/1/a~1b");
  b.begin_array();
  b.null();
  EXPECT_EQ(b.next_pointer(), "/1/a~1b/1");
}

TEST(ParseStrict, MessagesStayValidUtf8) {
  const Error e = error_of([] { parse_strict("\"\xFF\""); });
  EXPECT_NE(std::string(e.what()).find("\\xFF"), std::string::npos) << e.what();
}

TEST(TreeBuilder, RefusesDuplicatesWithoutAnOffset) {
  TreeBuilder b;
  b.begin_object();
  b.key("a\n\"");
  b.null();
  b.key("a\n\"");
  b.null();
  const Error e = error_of([&] { b.end_object(); });
  EXPECT_EQ(e.code(), ErrorCode::JsonInvalid);
  EXPECT_EQ(std::string(e.what()),
            "ERR_PAYLOAD_JSON_INVALID: duplicate member name \"a\\u000a\\\"\"");
}

TEST(TreeBuilder, BuildsWhatItIsFed) {
  TreeBuilder b;
  b.begin_array();
  b.number("1.0");
  b.begin_object();
  b.key("k");
  b.boolean(true);
  b.end_object();
  b.string("s");
  b.end_array();
  EXPECT_EQ(canonicalize(b.finish()), R"([1,{"k":true},"s"])");
}

TEST(TreeBuilder, RefusesNestingBeyondTheLimit) {
  TreeBuilder b;
  for (std::size_t i = 0; i < kMaxDepth; ++i) b.begin_array();
  EXPECT_EQ(error_of([&] { b.begin_object(); }).code(), ErrorCode::JsonInvalid);
}

}  // namespace
}  // namespace idem::json
