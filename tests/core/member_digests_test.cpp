// Naming what differs between two payloads of one key from their member digests alone.
#include "core/json/member_digests.hpp"

#include <gtest/gtest.h>

#include "core/fingerprint.hpp"

namespace idem::json {
namespace {

const hash::Digest kSalt = member_salt(hash::sha256("a scope"));

std::string digests(const std::string& body, const hash::Digest& salt = kSalt) {
  return fingerprint_text_with_members(body, {}, salt).members;
}

std::vector<std::string> differ(const std::string& first, const std::string& second) {
  return differing_members(digests(first), digests(second)).value();
}

TEST(MemberDigests, SamePayloadInAnyMemberOrderDiffersNowhere) {
  EXPECT_EQ(digests(R"({"a":1,"b":[1,2]})"), digests(R"({ "b" : [1, 2], "a" : 1.0 })"));
  EXPECT_TRUE(differ(R"({"a":1,"b":[1,2]})", R"({"b":[1,2],"a":1})").empty());
}

TEST(MemberDigests, NamesTheChangedMemberNeverItsParent) {
  EXPECT_EQ(differ(R"({"amount_cents":1999,"currency":"usd"})", R"({"amount_cents":2999,"currency":"usd"})"),
            std::vector<std::string>{"/amount_cents"});
  EXPECT_EQ(differ(R"({"items":[{"sku":"a","qty":1},{"sku":"b","qty":1}]})", R"({"items":[{"sku":"a","qty":1},{"sku":"b","qty":2}]})"),
            std::vector<std::string>{"/items/1"});
  EXPECT_EQ(differ(R"({"shipping":{"method":"express","amount":4.95}})", R"({"shipping":{"method":"post","amount":4.95}})"),
            std::vector<std::string>{"/shipping/method"});
}

TEST(MemberDigests, NamesAddedAndRemovedMembers) {
  EXPECT_EQ(differ(R"({"a":1,"b":2})", R"({"a":1,"c":2})"), (std::vector<std::string>{"/b", "/c"}));
  EXPECT_EQ(differ(R"({"items":[1,2]})", R"({"items":[1,2,3]})"), std::vector<std::string>{"/items/2"});
}

TEST(MemberDigests, BelowTheDepthTheDeepestKeptValueIsNamed) {
  EXPECT_EQ(differ(R"({"a":{"b":{"c":{"d":1}}}})", R"({"a":{"b":{"c":{"d":2}}}})"), std::vector<std::string>{"/a/b"});
}

TEST(MemberDigests, PointersAreEscaped) {
  EXPECT_EQ(differ(R"({"a/b":1,"m~n":1,"q\"":1})", R"({"a/b":2,"m~n":2,"q\"":2})"),
            (std::vector<std::string>{"/a~1b", "/m~0n", "/q\""}));
}

TEST(MemberDigests, TheSameValueUnderAnotherSaltHasAnotherDigest) {
  const std::string a = digests(R"({"amount_cents":1999})");
  const std::string b = digests(R"({"amount_cents":1999})", member_salt(hash::sha256("another scope")));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find("1999"), std::string::npos);  // values are never kept
  EXPECT_EQ(differing_members(a, b).value(), std::vector<std::string>{"/amount_cents"});
}

TEST(MemberDigests, ALevelThatDoesNotFitIsLeftOutWhole) {
  std::string many = R"({"items":[)";
  for (int i = 0; i < 200; ++i) many += (i ? "," : "") + std::to_string(i);
  many += "]}";
  const std::string encoded = digests(many);
  ASSERT_GE(encoded.size(), 2u);
  EXPECT_EQ(encoded[1], 1);  // only /items kept
  EXPECT_EQ(encoded.size(), 2u + 1 + 1 + 5 + 4);  // format, depth, root shape, "items", its digest
  std::string changed = many;
  changed.replace(changed.find("[0,"), 3, "[9,");
  EXPECT_EQ(differ(many, changed), std::vector<std::string>{"/items"});
}

TEST(MemberDigests, ScalarAndEmptyPayloadsHaveNoMembers) {
  EXPECT_EQ(digests("5"), std::string("\x01\x02\x00", 3));
  EXPECT_TRUE(differ("5", "6").empty());
}

TEST(MemberDigests, AnObjectThatBecameAnArrayNamesTheRoot) {
  EXPECT_EQ(differ("{}", "[]"), std::vector<std::string>{""});
  EXPECT_EQ(differ(R"({"0":1})", "[1]"), std::vector<std::string>{""});  // "/0" alike in both
}

TEST(MemberDigests, ExcludedMembersAreNotCompared) {
  const auto a = fingerprint_text_with_members(R"({"a":1,"trace":"x"})", {"/trace"}, kSalt).members;
  const auto b = fingerprint_text_with_members(R"({"a":2,"trace":"y"})", {"/trace"}, kSalt).members;
  EXPECT_EQ(differing_members(a, b).value(), std::vector<std::string>{"/a"});
}

TEST(MemberDigests, ArrayIndexesAreImpliedAndNamesKeptOnce) {
  // format, depth, root shape (2 members, object), "a" + digest + shape (3 elements, array) +
  // 3 digests, "b" + digest + leaf shape.
  EXPECT_EQ(digests(R"({"a":[1,2,3],"b":true})").size(), 3u + (1 + 1 + 4 + 1 + 3 * 4) + (1 + 1 + 4 + 1));
  EXPECT_TRUE(valid_member_digests(digests(R"({"a":[1,2,3],"b":true})")));
}

TEST(MemberDigests, AnythingElseIsNotAnEncoding) {
  EXPECT_FALSE(differing_members("", digests("{}")).has_value());
  EXPECT_FALSE(differing_members(std::string("\x02\x01", 2), digests("{}")).has_value());
  EXPECT_FALSE(differing_members(std::string("\x01\x01\x03\x05/a", 5), digests("{}")).has_value());  // name cut short
  EXPECT_FALSE(differing_members(std::string("\x01\x03\x00", 3), digests("{}")).has_value());           // deeper than kept
  EXPECT_FALSE(differing_members(digests(R"({"a":1})") + "x", digests("{}")).has_value());                // trailing bytes
}

// A caller's encoding (acquire's hash form) with names member_digests never writes: not UTF-8,
// twice, or out of RFC 8785's order. A NUL in a name (JSON's \u0000) is well-formed, and comes
// back as U+FFFD: PostgreSQL's text holds no NUL.
TEST(MemberDigests, NamesMustBeUtf8OnceAndInOrder) {
  const std::string zeros(4, '\0'), other("\x01\x02\x03\x04", 4);
  const auto object = [](char members, const std::string& entries) { return std::string("\x01\x01", 2) + members + entries; };
  EXPECT_FALSE(valid_member_digests(object('\x03', "\x01\xff" + zeros)));
  EXPECT_FALSE(valid_member_digests(object('\x03', "\x02\xc0\x80" + zeros)));  // an overlong NUL
  EXPECT_FALSE(valid_member_digests(object('\x05', "\x01x" + zeros + "\x01x" + zeros)));
  EXPECT_FALSE(valid_member_digests(object('\x05', "\x01y" + zeros + "\x01x" + zeros)));
  EXPECT_TRUE(valid_member_digests(object('\x05', "\x01x" + zeros + "\x01y" + zeros)));
  const std::string nul_name = std::string("\x03" "a\0b", 4);
  EXPECT_EQ(differing_members(object('\x03', nul_name + zeros), object('\x03', nul_name + other)).value(),
            std::vector<std::string>{"/a\xEF\xBF\xBD" "b"});
  // A member named with the replacement character itself is another member: only the one that
  // changed is named, once.
  EXPECT_EQ(differ(R"({"a\u0000b":2,"a\ufffdb":1})", R"({"a\u0000b":1,"a\ufffdb":1})"),
            std::vector<std::string>{"/a\xEF\xBF\xBD" "b"});
}

TEST(MemberDigests, MatchesTheFingerprintOfTheSameText) {
  const std::string body = R"({"b":[true,null],"a":"\u00e9"})";
  EXPECT_EQ(fingerprint_text_with_members(body, {}, kSalt).fingerprint.hash, fingerprint_text(body).hash);
}

}  // namespace
}  // namespace idem::json
