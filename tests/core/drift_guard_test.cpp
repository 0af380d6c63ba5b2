// The drift guard: canonical output and hashes of the current fingerprint scheme are pinned by
// committed golden vectors. Records keep their scheme for 24 h or more, so a silent change to
// canonicalization would turn retries into false mismatches (or worse, double executions).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"

namespace idem {
namespace {

std::string golden_path() {
  return std::string(IDEM_SOURCE_DIR) + "/tests/golden/fingerprint_scheme" + std::to_string(kFingerprintScheme) + ".json";
}

constexpr const char* kRemedy =
    "If the change is intended, give it a new scheme: bump kFingerprintScheme in core/fingerprint.hpp "
    "and add tests/golden/fingerprint_scheme<N>.json. Never rewrite a released scheme's vectors.";

TEST(DriftGuard, GoldenVectorsOfTheCurrentSchemeHold) {
  std::ifstream in(golden_path());
  ASSERT_TRUE(in.good()) << "ERR_BREAKING_IDEMPOTENCY_DRIFT: no golden vectors for fingerprint scheme "
                         << kFingerprintScheme << " at " << golden_path() << ". " << kRemedy;
  const auto vectors = nlohmann::json::parse(in);
  ASSERT_GE(vectors.size(), 20u);
  std::size_t checked = 0;
  for (const auto& v : vectors) {
    const std::string input = v.at("input");
    const std::vector<std::string> exclude = v.value("exclude", std::vector<std::string>{});
    const std::string expected_canonical = v.at("canonical");
    const std::string expected_hash = v.at("sha256");
    std::string canonical;
    std::string hash;
    try {
      canonical = json::canonicalize(json::parse_strict(input));
      hash = hash::to_hex(fingerprint_text(input, exclude).hash);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "ERR_BREAKING_IDEMPOTENCY_DRIFT: scheme " << kFingerprintScheme << " no longer accepts "
                    << input << " (" << e.what() << "). " << kRemedy;
      continue;
    }
    EXPECT_EQ(canonical, expected_canonical)
        << "ERR_BREAKING_IDEMPOTENCY_DRIFT: canonical output of scheme " << kFingerprintScheme << " changed for "
        << input << ". " << kRemedy;
    EXPECT_EQ(hash, expected_hash) << "ERR_BREAKING_IDEMPOTENCY_DRIFT: payload hash of scheme " << kFingerprintScheme
                                   << " changed for " << input << ". " << kRemedy;
    ++checked;
  }
  EXPECT_EQ(checked, vectors.size());
}

}  // namespace
}  // namespace idem
