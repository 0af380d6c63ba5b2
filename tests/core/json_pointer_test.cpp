// RFC 6901 pointers: parsing, escaping, and removal of the values they name.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "core/json/pointer.hpp"

namespace idem::json {
namespace {

using Tokens = std::vector<std::string>;

std::string removed(const std::string& text, const std::vector<std::string>& pointers) {
  Value doc = parse_strict(text);
  remove_pointers(doc, pointers);
  return canonicalize(doc);
}

ErrorCode code_of_remove(const std::vector<std::string>& pointers) {
  Value doc = parse_strict(R"({"a":1})");
  try {
    remove_pointers(doc, pointers);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no error";
  return ErrorCode::Internal;
}

TEST(ParsePointer, SplitsAndUnescapes) {
  EXPECT_EQ(parse_pointer(""), Tokens{});
  EXPECT_EQ(parse_pointer("/"), Tokens{""});
  EXPECT_EQ(parse_pointer("//"), (Tokens{"", ""}));
  EXPECT_EQ(parse_pointer("/a~1b/c~0d"), (Tokens{"a/b", "c~d"}));
  EXPECT_EQ(parse_pointer("/~01"), Tokens{"~1"});  // ~0 first, then a plain '1'
  EXPECT_EQ(parse_pointer("/~10"), Tokens{"/0"});
  EXPECT_EQ(parse_pointer("/items/0/ id"), (Tokens{"items", "0", " id"}));
}

TEST(ParsePointer, RefusesMalformedPointers) {
  for (const char* p : {"a", "a/b", "/~", "/~2", "/a~", "/~a", "#/a"}) {
    try {
      parse_pointer(p);
      ADD_FAILURE() << "accepted " << p;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::JsonPointerInvalid) << p;
    }
  }
}

TEST(EscapeToken, IsTheInverseOfParsing) {
  EXPECT_EQ(escape_token("a/b~c"), "a~1b~0c");
  EXPECT_EQ(escape_token("~1"), "~01");
  EXPECT_EQ(escape_token(""), "");
  EXPECT_EQ(parse_pointer("/" + escape_token("x~/~1/")), Tokens{"x~/~1/"});
}

TEST(RemovePointers, RemovesMembersAndElements) {
  const std::string doc = R"({"trace_id":"t","payment":{"amount":5,"meta":{"ts":1,"a/b":2,)"
                          R"("m~n":3}},"items":[10,11,12]})";
  EXPECT_EQ(removed(doc, {"/trace_id"}),
            R"({"items":[10,11,12],"payment":{"amount":5,"meta":{"a/b":2,"m~n":3,"ts":1}}})");
  EXPECT_EQ(removed(doc, {"/payment/meta/a~1b", "/payment/meta/m~0n"}),
            R"({"items":[10,11,12],"payment":{"amount":5,"meta":{"ts":1}},"trace_id":"t"})");
  EXPECT_EQ(removed(doc, {"/items/1"}),
            R"({"items":[10,12],"payment":{"amount":5,"meta":{"a/b":2,"m~n":3,"ts":1}},)"
            R"("trace_id":"t"})");
}

TEST(RemovePointers, ResolvesEveryPointerAgainstTheOriginalDocument) {
  EXPECT_EQ(removed("[0,1,2,3]", {"/0", "/2"}), "[1,3]");
  EXPECT_EQ(removed("[0,1,2,3]", {"/2", "/0", "/2"}), "[1,3]");
  EXPECT_EQ(removed(R"({"a":{"b":1,"c":2},"d":3})", {"/a", "/a/b"}), R"({"d":3})");
  EXPECT_EQ(removed(R"({"a":{"b":1,"c":2},"d":3})", {"/a/b", "/a"}), R"({"d":3})");
  EXPECT_EQ(removed(R"([[0,1],[2,3]])", {"/0/1", "/1/0", "/0"}), "[[3]]");
}

TEST(RemovePointers, IgnoresPointersThatNameNothing) {
  const std::string doc = R"({"a":[1,2],"b":{"c":true},"":0})";
  const std::string same = R"({"":0,"a":[1,2],"b":{"c":true}})";
  for (const char* p : {"/missing", "/a/2", "/a/-", "/a/01", "/a/x", "/a/-1", "/b/c/d", "/b/x/y",
                        "/a/99999999999999999999999"}) {
    EXPECT_EQ(removed(doc, {p}), same) << p;
  }
  EXPECT_EQ(removed(doc, {"/"}), R"({"a":[1,2],"b":{"c":true}})");  // the member named ""
  EXPECT_EQ(removed("5", {"/a"}), "5");
}

TEST(RemovePointers, RefusesTheWholeDocumentAndMalformedPointers) {
  EXPECT_EQ(code_of_remove({""}), ErrorCode::JsonPointerInvalid);
  EXPECT_EQ(code_of_remove({"/a", "a"}), ErrorCode::JsonPointerInvalid);
  EXPECT_EQ(code_of_remove({"/~3"}), ErrorCode::JsonPointerInvalid);
}

}  // namespace
}  // namespace idem::json
