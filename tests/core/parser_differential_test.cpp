// Differential test: the hand-written parse_strict against the nlohmann-json reference
// (tests/reference/) on generated documents, valid and mutated, from a fixed seed. Both must accept
// with byte-identical canonical forms, or both refuse with the same error, offset and message.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"
#include "tests/reference/nlohmann_parser.hpp"
#include "tests/support/json_gen.hpp"
#include "tests/support/split_mix64.hpp"

namespace idem::json {
namespace {

using Rng = testing::SplitMix64;

using testing::gen_document;
using testing::mutate;

struct Outcome {
  bool accepted = false;
  std::string canonical;  // when accepted
  ErrorCode code = ErrorCode::Internal;
  std::string message;  // when refused
};

template <typename Parse>
Outcome outcome_of(Parse&& parse, const std::string& text) {
  Outcome o;
  try {
    const Value v = parse(text);
    o.accepted = true;
    o.canonical = canonicalize(v);
  } catch (const Error& e) {
    o.code = e.code();
    o.message = e.what();
  }
  return o;
}

// The "byte N" a message names, or npos.
std::size_t byte_of(const std::string& message) {
  const std::size_t at = message.find("byte ");
  if (at == std::string::npos) return std::string::npos;
  return std::stoul(message.substr(at + 5));
}

struct Tally {
  std::size_t accepted = 0;
  std::size_t refused = 0;
  std::size_t offset_differences = 0;
  std::size_t message_differences = 0;
  std::set<std::string> kinds;  // distinct refusals, offsets and quoted input left out
};

// A refusal's message without what varies with the input (offsets, quoted input): its kind.
std::string kind_of(const std::string& message) {
  std::string text = message;
  const std::size_t quoted = text.find("; last read: '");
  if (quoted != std::string::npos) {
    const std::size_t expected = text.rfind("'; expected ");
    text = text.substr(0, quoted) + (expected > quoted && expected != std::string::npos
                                         ? text.substr(expected + 1)
                                         : std::string());
  }
  std::string kind;
  for (const char c : text.substr(0, text.find(" at /"))) {
    if (c < '0' || c > '9') kind += c;
  }
  return kind;
}

void compare(const std::string& doc, Tally& tally) {
  const Outcome ours = outcome_of([](const std::string& t) { return parse_strict(t); }, doc);
  const Outcome ref =
      outcome_of([](const std::string& t) { return reference::parse_strict_nlohmann(t); }, doc);
  ASSERT_EQ(ours.accepted, ref.accepted)
      << "input: " << ::testing::PrintToString(doc) << "\nours: " << ours.message
      << "\nreference: " << ref.message;
  if (ours.accepted) {
    ++tally.accepted;
    ASSERT_EQ(ours.canonical, ref.canonical) << "input: " << ::testing::PrintToString(doc);
    return;
  }
  ++tally.refused;
  tally.kinds.insert(kind_of(ours.message));
  ASSERT_EQ(ours.code, ref.code) << "input: " << ::testing::PrintToString(doc)
                                 << "\nours: " << ours.message << "\nreference: " << ref.message;
  if (byte_of(ours.message) != byte_of(ref.message)) {
    ++tally.offset_differences;
    ADD_FAILURE() << "offsets differ for " << ::testing::PrintToString(doc)
                  << "\nours: " << ours.message << "\nreference: " << ref.message;
  } else if (ours.message != ref.message) {
    ++tally.message_differences;
    // nlohmann takes a NUL byte outside a string for the end of the input; its wrapper refuses it
    // at the right offset but cannot say it in the same words. Nothing else may differ.
    if (doc.find('\0') == std::string::npos) {
      ADD_FAILURE() << "messages differ for " << ::testing::PrintToString(doc)
                    << "\nours: " << ours.message << "\nreference: " << ref.message;
    }
  }
}

TEST(ParserDifferential, AgreesWithNlohmannOnGeneratedDocuments) {
  Rng rng(20261129);
  Tally tally;
  constexpr int kValid = 3000;
  constexpr int kMutated = 9000;
  for (int i = 0; i < kValid; ++i) {
    compare(gen_document(rng), tally);
    if (HasFatalFailure()) return;
  }
  for (int i = 0; i < kMutated; ++i) {
    compare(mutate(rng, gen_document(rng)), tally);
    if (HasFatalFailure()) return;
  }
  std::printf(
      "[ differential ] %zu accepted, %zu refused (%zu kinds of refusal), %zu offset "
      "differences, %zu message differences (NUL bytes)\n",
      tally.accepted, tally.refused, tally.kinds.size(), tally.offset_differences,
      tally.message_differences);
  if (std::getenv("IDEM_DIFFERENTIAL_KINDS") != nullptr) {
    for (const std::string& kind : tally.kinds) std::printf("  %s\n", kind.c_str());
  }
  EXPECT_GT(tally.accepted, 1000u);
  EXPECT_GT(tally.refused, 3000u);
  EXPECT_EQ(tally.offset_differences, 0u);
}

TEST(ParserDifferential, AgreesOnHandPickedEdges) {
  const std::vector<std::string> cases = testing::edge_cases();
  Tally tally;
  for (const std::string& doc : cases) {
    compare(doc, tally);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(tally.offset_differences, 0u);
}

}  // namespace
}  // namespace idem::json
