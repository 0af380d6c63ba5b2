// The one-pass canonicalizer (canonicalize_text, fingerprint_text) against the tree path it
// replaced in the fingerprint: parse_strict, remove_pointers, require_exact_numbers, canonicalize
// (fingerprint(Value)). On every input and set of exclusions both must give the same bytes and
// hash, or the same refusal: code and message.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/hash/sha256.hpp"
#include "core/interrupts.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "core/json/pointer.hpp"
#include "tests/support/json_gen.hpp"
#include "tests/support/split_mix64.hpp"

namespace idem::json {
namespace {

using Rng = testing::SplitMix64;
using Pointers = std::vector<std::string>;

struct Outcome {
  bool accepted = false;
  std::string canonical;
  std::string hash;
  ErrorCode code = ErrorCode::Internal;
  std::string message;
};

Outcome run(const std::function<std::string()>& canonical, const std::function<hash::Digest()>& digest) {
  Outcome o;
  try {
    o.canonical = canonical();
    o.hash = hash::to_hex(digest());
    o.accepted = true;
  } catch (const Error& e) {
    o.code = e.code();
    o.message = e.what();
  }
  return o;
}

Outcome tree_path(const std::string& text, const Pointers& exclude) {
  return run(
      [&] {
        Value doc = parse_strict(text);
        if (!exclude.empty()) remove_pointers(doc, exclude);
        require_exact_numbers(doc);
        return canonicalize(doc);
      },
      [&] { return fingerprint(parse_strict(text), exclude).hash; });
}

Outcome one_pass(const std::string& text, const Pointers& exclude) {
  return run([&] { return canonicalize_text(text, exclude); },
             [&] { return fingerprint_text(text, exclude).hash; });
}

struct Tally {
  std::size_t accepted = 0;
  std::size_t refused = 0;
  std::size_t with_exclusions = 0;
};

void compare(const std::string& text, const Pointers& exclude, Tally& tally) {
  const Outcome ref = tree_path(text, exclude);
  const Outcome ours = one_pass(text, exclude);
  std::string pointers;
  for (const std::string& p : exclude) pointers += " " + ::testing::PrintToString(p);
  ASSERT_EQ(ours.accepted, ref.accepted) << "input: " << ::testing::PrintToString(text)
                                         << "\nexclude:" << pointers << "\none pass: " << ours.message
                                         << "\ntree: " << ref.message;
  if (!exclude.empty()) ++tally.with_exclusions;
  if (ours.accepted) {
    ++tally.accepted;
    ASSERT_EQ(ours.canonical, ref.canonical) << "input: " << ::testing::PrintToString(text)
                                             << "\nexclude:" << pointers;
    ASSERT_EQ(ours.hash, ref.hash);
    return;
  }
  ++tally.refused;
  ASSERT_EQ(ours.code, ref.code) << "input: " << ::testing::PrintToString(text) << "\nexclude:" << pointers
                                 << "\none pass: " << ours.message << "\ntree: " << ref.message;
  ASSERT_EQ(ours.message, ref.message) << "input: " << ::testing::PrintToString(text)
                                       << "\nexclude:" << pointers;
}

// Every pointer that names something in `v`, escaped ("" for the document itself).
void collect(const Value& v, const std::string& at, std::vector<std::string>& out) {
  out.push_back(at);
  if (v.kind == Kind::Array) {
    for (std::size_t i = 0; i < v.items.size(); ++i) collect(v.items[i], at + "/" + std::to_string(i), out);
  } else if (v.kind == Kind::Object) {
    for (std::size_t i = 0; i < v.items.size(); ++i) collect(v.items[i], at + "/" + escape_token(v.keys[i]), out);
  }
}

// Up to four exclusions for `text`: mostly pointers to what is there, and some that name nothing,
// are malformed or name the whole document.
Pointers gen_pointers(Rng& rng, const std::string& text) {
  static const char* const kOdd[] = {"/missing", "/0", "/-", "/01", "/00", "/a/b", "a", "/~2", "/~", "",
                                     "/", "//", "/k", "/k/k", "/0/0", "/99999999999999999999999",
                                     "/18446744073709551615", "/1/k"};
  std::vector<std::string> present;
  try {
    collect(parse_strict(text), "", present);
  } catch (const Error&) {
  }
  Pointers out;
  const std::size_t n = rng.below(5);
  for (std::size_t i = 0; i < n; ++i) {
    if (present.size() > 1 && !rng.chance(5)) {
      std::string p = present[1 + rng.below(present.size() - 1)];
      if (rng.chance(8)) p += "/x";  // below a scalar, or a member that is not there
      out.push_back(p);
    } else {
      out.push_back(rng.pick(kOdd));
    }
  }
  return out;
}

TEST(CanonicalText, AgreesWithTheTreePathOnGeneratedDocuments) {
  Rng rng(20270301);
  Tally tally;
  for (int i = 0; i < 4000; ++i) {
    const std::string doc = testing::gen_document(rng);
    compare(doc, {}, tally);
    if (HasFatalFailure()) return;
    compare(doc, gen_pointers(rng, doc), tally);
    if (HasFatalFailure()) return;
  }
  for (int i = 0; i < 8000; ++i) {
    const std::string doc = testing::mutate(rng, testing::gen_document(rng));
    compare(doc, rng.chance(2) ? Pointers{} : gen_pointers(rng, doc), tally);
    if (HasFatalFailure()) return;
  }
  std::printf("[ one pass ] %zu accepted, %zu refused, %zu with exclusions\n", tally.accepted,
              tally.refused, tally.with_exclusions);
  EXPECT_GT(tally.accepted, 2000u);
  EXPECT_GT(tally.refused, 3000u);
}

TEST(CanonicalText, AgreesOnHandPickedEdges) {
  Tally tally;
  for (const std::string& doc : testing::edge_cases()) {
    compare(doc, {}, tally);
    if (HasFatalFailure()) return;
    compare(doc, {"/0", "/a"}, tally);
    if (HasFatalFailure()) return;
  }
}

// The order of refusals: parse errors, then a malformed exclusion, then the first inexact number
// of what the exclusions leave, named by its pointer in that document.
TEST(CanonicalText, RefusesInTheTreePathsOrder) {
  const struct {
    const char* text;
    Pointers exclude;
    ErrorCode code;
  } cases[] = {
      {R"({"a":9007199254740993,"b":[1,}])", {}, ErrorCode::JsonInvalid},
      {R"({"a":9007199254740993,"a":1})", {}, ErrorCode::JsonInvalid},
      {R"([9007199254740993,1e400])", {}, ErrorCode::NumberPrecision},
      {R"({"a":9007199254740993})", {"a"}, ErrorCode::JsonPointerInvalid},
      {R"({"a":9007199254740993})", {"/a", ""}, ErrorCode::JsonPointerInvalid},
      {R"({"a":1,)", {"a"}, ErrorCode::JsonInvalid},
      {R"({"a":9007199254740993})", {"/a"}, ErrorCode::Internal},  // accepted
      {R"({"a":{"b":9007199254740993}})", {"/a"}, ErrorCode::Internal},
      {R"({"items":[1,9007199254740993]})", {"/items/0"}, ErrorCode::NumberPrecision},  // at /items/0
      {R"({"items":[1,[2,3],{"x~/y":0.1e1,"z":333333333.33333329}]})", {"/items/1"},
       ErrorCode::NumberPrecision},
      {R"({"x":{"a":1,"a":2}})", {"/x"}, ErrorCode::JsonInvalid},       // excluded, still parsed
      {R"({"x":[1e400]})", {"/x"}, ErrorCode::NumberPrecision},         // at /x/0 (byte 6)
      {R"({"k":[0,1e999]})", {"/k/0"}, ErrorCode::NumberPrecision},     // at /k/1: as given
      {R"({"a":{"b":1,"c":2},"d":3})", {"/a/b", "/a"}, ErrorCode::Internal},
      {R"([[0,1],[2,3]])", {"/0/1", "/1/0", "/0"}, ErrorCode::Internal},
      {R"({"a":[1,2],"b":{"c":true},"":0})", {"/", "/a/-", "/a/01", "/b/c/d"}, ErrorCode::Internal},
      {"1e-400", {}, ErrorCode::NumberPrecision},
      {"5", {"/a"}, ErrorCode::Internal},
  };
  Tally tally;
  for (const auto& c : cases) {
    compare(c.text, c.exclude, tally);
    if (HasFatalFailure()) return;
    const Outcome ours = one_pass(c.text, c.exclude);
    if (c.code == ErrorCode::Internal) {
      EXPECT_TRUE(ours.accepted) << c.text << ": " << ours.message;
    } else {
      EXPECT_EQ(ours.code, c.code) << c.text << ": " << ours.message;
    }
  }
  EXPECT_NE(one_pass(R"({"items":[1,9007199254740993]})", {"/items/0"}).message.find(" at /items/0 "),
            std::string::npos);
}

// Objects above the 32 members the duplicate check compares pairwise for, in shuffled order.
TEST(CanonicalText, AgreesOnLargeObjects) {
  Rng rng(7);
  Tally tally;
  for (int round = 0; round < 300; ++round) {
    const std::size_t n = 20 + rng.below(80);
    std::string doc = "{";
    for (std::size_t i = 0; i < n; ++i) {
      if (i != 0) doc += ",";
      // Sometimes a name repeats: a duplicate somewhere in a large object.
      const std::uint64_t name = rng.chance(12) ? rng.below(n) : 1000 + (rng.next() % 100000);
      doc += "\"k" + std::to_string(name) + (rng.chance(4) ? "\\u00e9" : "") + "\":";
      doc += rng.chance(10) ? "{\"z\":1,\"a\":[2,{\"y\":3,\"b\":4}]}" : std::to_string(i);
    }
    doc += "}";
    compare(doc, {}, tally);
    if (HasFatalFailure()) return;
    compare(doc, {"/k3", "/k1000"}, tally);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(tally.accepted, 50u);
  EXPECT_GT(tally.refused, 50u);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fuzz seeds, the golden drift vectors (with their exclusions) and a document of a few
// megabytes (past what the thread's buffers keep between calls).
TEST(CanonicalText, AgreesOnSeedsGoldenVectorsAndALargeDocument) {
  Tally tally;
  const std::string root = IDEM_SOURCE_DIR;
  for (const char* seed : {"duplicate", "escapes", "names", "nested", "numbers", "order"}) {
    const std::string text = read_file(root + "/fuzz/seeds/" + seed + ".json");
    ASSERT_FALSE(text.empty()) << seed;
    compare(text, {}, tally);
    compare(text, {"/0", "/a", "/items/0"}, tally);
  }
  std::ifstream golden(root + "/tests/golden/fingerprint_scheme1.json");
  ASSERT_TRUE(golden.good());
  for (const auto& v : nlohmann::json::parse(golden)) {
    compare(v.at("input").get<std::string>(), v.value("exclude", Pointers{}), tally);
    if (HasFatalFailure()) return;
  }
  std::string big = "[";
  for (int i = 0; i < 40000; ++i) {
    big += i ? "," : "";
    big += R"({"id":)" + std::to_string(i) + R"(,"name":"n\u00e9)" + std::to_string(i) +
           R"(","price":4.50,"tags":["a","b"]})";
  }
  big += "]";
  ASSERT_GT(big.size(), 2'000'000u);
  compare(big, {}, tally);
  compare(big, {"/7/name", "/39999"}, tally);
  compare("[1,2]", {}, tally);  // after the large one: the buffers were given back
  EXPECT_GE(tally.refused, 1u);  // duplicate.json at least
}

int polls = 0;
void count_poll() { ++polls; }
void cancel_poll() { throw std::runtime_error("cancelled"); }

TEST(CanonicalText, PollsAndCanBeCancelled) {
  std::string doc = "[";
  for (int i = 0; i < 100000; ++i) doc += i ? ",{\"b\":1,\"a\":2}" : "{\"b\":1,\"a\":2}";
  doc += "]";
  polls = 0;
  set_interrupt_poll(count_poll);
  const std::string canonical = canonicalize_text(doc);
  set_interrupt_poll(nullptr);
  EXPECT_GE(polls, 24);
  set_interrupt_poll(cancel_poll);
  EXPECT_THROW(fingerprint_text(doc), std::runtime_error);
  set_interrupt_poll(nullptr);
  // Abandoned halfway: the next call starts clean.
  EXPECT_EQ(canonicalize_text(doc), canonical);
  EXPECT_EQ(canonicalize_text(R"({"b":1,"a":[]})"), R"({"a":[],"b":1})");
}

}  // namespace
}  // namespace idem::json
