// parse_key_header: the Idempotency-Key header as an RFC 8941 String (RFC 8941's own examples and
// the httpwg structured-field-tests string cases), the bare form as the same key, and what a
// client must never get a key from: lists, parameters, several lines, bad escapes, non-ASCII.
#include "idem/key_header.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace idem {
namespace {

std::string key_of(std::string_view v) {
  const KeyHeader h = parse_key_header(v);
  EXPECT_FALSE(h.refused()) << "refused " << v << ": " << h.error;
  return h.key.value_or("<none>");
}

bool refused(std::string_view v) {
  const KeyHeader h = parse_key_header(v);
  if (h.refused()) {
    EXPECT_FALSE(h.key.has_value()) << v;
  }
  return h.refused();
}

std::string error_of(std::string_view v) { return parse_key_header(v).error; }

// RFC 8941 section 3.3.3 (Example-String) and the string cases of the httpwg test suite.
TEST(KeyHeader, Rfc8941StringExamples) {
  EXPECT_EQ(key_of(R"("hello world")"), "hello world");
  EXPECT_EQ(key_of(R"("foo")"), "foo");                     // basic string
  EXPECT_EQ(key_of(R"("")"), "");                           // empty string: the key check calls it missing
  EXPECT_EQ(key_of(R"("foo \"bar\"")"), R"(foo "bar")");    // string quoting
  EXPECT_EQ(key_of(R"("a\\b")"), R"(a\b)");
  EXPECT_TRUE(refused("'foo'"));                            // single quoted string
  EXPECT_TRUE(refused(R"("foo)"));                          // unbalanced string
  EXPECT_TRUE(refused(R"("foo \,")"));                      // bad string quoting
  EXPECT_TRUE(refused(R"("foo \)"));                        // ending string quote
  EXPECT_TRUE(refused(R"("foo \")"));                       // abruptly ending string quote
  // "Parsers MUST support Strings with at least 1024 characters" (section 3.3.3).
  const std::string long_key(1024, 'k');
  EXPECT_EQ(key_of("\"" + long_key + "\""), long_key);
}

// RFC 8941's examples of the other types are not Strings (nor bare keys).
TEST(KeyHeader, Rfc8941ExamplesOfOtherTypesAreRefused) {
  EXPECT_TRUE(refused("?1"));                                                // Example-BoolHdr
  EXPECT_TRUE(refused(":cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:"));    // Example-BinaryHdr
  EXPECT_TRUE(refused(R"("foo", "bar", "It was the best of times.")"));      // Example-StrListHeader
  EXPECT_TRUE(refused("foo, bar"));                                          // Example-Hdr, one line
  EXPECT_TRUE(refused(R"(("foo" "bar"), ("baz"), ("bat" "one"), ())"));      // Example-StrListListHeader
  EXPECT_TRUE(refused(R"(2; foourl="https://foo.example.com/")"));           // Foo-Example
  EXPECT_TRUE(refused("1; a; b=?0"));                                        // Example-IntHeader
  EXPECT_TRUE(refused("5; foo=bar"));                                        // Example-IntItemHeader (params)
  EXPECT_TRUE(refused(R"(en="Applepie", da=:w4ZibGV0w6ZydGU=:)"));           // Example-DictHeader
  EXPECT_TRUE(refused("a=?0, b, c; foo=bar"));                               // Example-DictHeader
  EXPECT_TRUE(refused("rating=1.5, feelings=(joy sadness)"));                // Example-DictListHeader
}

// Every byte inside a String: 0x20..0x7E except DQUOTE and backslash stand for themselves; the
// rest is refused (the httpwg string-generated cases), whatever follows.
TEST(KeyHeader, EveryByteInsideAString) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const std::string value = std::string("\"a") + c + "b\"";
    const KeyHeader h = parse_key_header(value);
    if (b == '"') {
      EXPECT_TRUE(h.refused()) << "byte " << b;  // closes the String early: "a" then b"
    } else if (b == '\\') {
      EXPECT_TRUE(h.refused()) << "byte " << b;  // \b is no escape
    } else if (b >= 0x20 && b <= 0x7E) {
      ASSERT_FALSE(h.refused()) << "byte " << b << ": " << h.error;
      EXPECT_EQ(*h.key, std::string("a") + c + "b") << "byte " << b;
    } else {
      EXPECT_TRUE(h.refused()) << "byte " << b;
    }
  }
}

// Only \" and \\ are escapes (the httpwg "escaped 0x.. in string" cases).
TEST(KeyHeader, OnlyQuoteAndBackslashAreEscapes) {
  for (int b = 0; b < 256; ++b) {
    const std::string value = std::string("\"a\\") + static_cast<char>(b) + "b\"";
    const KeyHeader h = parse_key_header(value);
    if (b == '"' || b == '\\') {
      ASSERT_FALSE(h.refused()) << "byte " << b << ": " << h.error;
      EXPECT_EQ(*h.key, std::string("a") + static_cast<char>(b) + "b");
    } else {
      EXPECT_TRUE(h.refused()) << "byte " << b;
    }
  }
}

TEST(KeyHeader, QuotedAndBareAreTheSameKey) {
  const std::string uuid = "9b2f6a4e-1c8d-4e0b-a7f3-5d6c2e1b0a99";  // starts with a digit: not an sf-token
  EXPECT_EQ(key_of("\"" + uuid + "\""), uuid);
  EXPECT_EQ(key_of(uuid), uuid);
  for (const std::string k : {"order-2024-0001-retry", "K", "*star", "a:b/c", "key_with.dots~and|pipes"}) {
    EXPECT_EQ(key_of("\"" + k + "\""), k);
    EXPECT_EQ(key_of(k), k);
  }
  // A bare key is kept as sent, never read as a number.
  EXPECT_EQ(key_of("4.5"), "4.5");
  EXPECT_EQ(key_of("0042"), "0042");
}

TEST(KeyHeader, SurroundingWhitespaceIsIgnored) {
  EXPECT_EQ(key_of("  \"k k\"  "), "k k");
  EXPECT_EQ(key_of("\t\"k\"\t"), "k");
  EXPECT_EQ(key_of("  bare-key "), "bare-key");
  EXPECT_EQ(key_of(""), "");
  EXPECT_EQ(key_of("   "), "");
}

TEST(KeyHeader, ListsAreRefused) {
  for (const char* v : {R"("a", "b")", R"("a","b")", R"("a" , "b")", "a, b", "a,b", R"("a",)", R"("a" "b")", "a b"}) {
    EXPECT_TRUE(refused(v)) << v;
  }
  EXPECT_EQ(error_of(R"("a", "b")"),
            "Idempotency-Key holds more than one value (the comma at position 3 makes a list, as a proxy merging two "
            "headers would): send one key");
  // A comma inside a String is a character of the key.
  EXPECT_EQ(key_of(R"("a, b")"), "a, b");
}

TEST(KeyHeader, ParametersAreRefused) {
  for (const char* v : {R"("K";p=1)", R"("K"; p=1)", R"("K";p)", R"("K" ;p=1)", "K;p=1", "K ;p"}) {
    EXPECT_TRUE(refused(v)) << v;
  }
  EXPECT_EQ(error_of(R"("K";p=1)"), "Idempotency-Key has parameters (';' at position 3): send the key alone");
  EXPECT_EQ(key_of(R"("K;p=1")"), "K;p=1");
}

TEST(KeyHeader, SeveralLinesAreRefused) {
  EXPECT_FALSE(parse_key_header(std::vector<std::string>{}).key.has_value());
  EXPECT_FALSE(parse_key_header(std::vector<std::string>{}).refused());
  EXPECT_EQ(parse_key_header(std::vector<std::string>{"\"a\""}).key, "a");
  const KeyHeader two = parse_key_header(std::vector<std::string>{"\"a\"", "\"a\""});  // equal lines too
  EXPECT_TRUE(two.refused());
  EXPECT_FALSE(two.key.has_value());
  EXPECT_EQ(two.error,
            "Idempotency-Key was sent 2 times: send it once, with one key (several lines of a header make a list)");
  EXPECT_TRUE(parse_key_header(std::vector<std::string>{"a", "b", "c"}).refused());
}

TEST(KeyHeader, BadEscapesAndUnterminatedStringsAreRefused) {
  EXPECT_EQ(error_of(R"("abc\x")"),
            "Idempotency-Key has a backslash before 'x' at position 4: a String escapes only \\\" and \\\\");
  EXPECT_EQ(error_of(R"("abc)"), "Idempotency-Key opens a String at position 0 and never closes it (no closing \")");
  EXPECT_EQ(error_of(R"("abc\)"),
            "Idempotency-Key ends in a backslash at position 4, inside a String that is never closed");
  EXPECT_EQ(error_of(R"("abc"def)"),
            "Idempotency-Key has more after the String's closing quote (at position 5): send one String and nothing else");
}

TEST(KeyHeader, NonAsciiIsRefused) {
  EXPECT_EQ(error_of("\"k\xc3\xa9y\""),
            "Idempotency-Key has a byte outside printable ASCII (0xC3) at position 2: a String holds only 0x20..0x7E");
  EXPECT_EQ(error_of("k\xc3\xa9y"), "Idempotency-Key has a byte outside printable ASCII (0xC3) at position 1");
  EXPECT_TRUE(refused("\"tab\there\""));
  EXPECT_TRUE(refused(std::string("\"nul\0\"", 6)));
}

TEST(KeyHeader, BareKeysHoldTokenCharactersOnly) {
  EXPECT_EQ(error_of("abc=="),
            "Idempotency-Key has '=' at position 3, which a bare key cannot hold: send the key as a String, \"...\" "
            "(inside it, \\\" and \\\\ escape a quote and a backslash)");
  EXPECT_EQ(key_of("\"abc==\""), "abc==");
  for (const char* v : {"a\"b", "a\\b", "a(b", "a@b", "a[b]", "a{b}", "a<b>", "a?b"}) EXPECT_TRUE(refused(v)) << v;
  EXPECT_EQ(error_of("'foo'"),
            "Idempotency-Key must be a String (\"...\") or a bare token starting with a letter, a digit or '*'; single "
            "quotes do not delimit a String (found ''' at position 0)");
  EXPECT_TRUE(refused("-5"));
  EXPECT_TRUE(refused("/path"));
}

TEST(KeyHeader, ProblemNamesTheReason) {
  const KeyHeader h = parse_key_header(R"("K";p=1)");
  const Response r = key_header_problem(h);
  EXPECT_EQ(r.status, 400);
  ASSERT_NE(r.header("Content-Type"), nullptr);
  EXPECT_EQ(*r.header("Content-Type"), "application/problem+json");
  const auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["code"], "ERR_IDEMPOTENCY_KEY_INVALID");
  EXPECT_EQ(body["status"], 400);
  EXPECT_EQ(body["detail"], h.error);
}

}  // namespace
}  // namespace idem
