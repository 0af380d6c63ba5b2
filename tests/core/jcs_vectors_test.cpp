// The RFC 8785 reference vectors (shared/testdata/jcs, beside the repository): every input must
// canonicalize to its output byte for byte. A missing directory fails; it is never skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/json/canonical.hpp"
#include "core/json/parser.hpp"

namespace idem::json {
namespace {

namespace fs = std::filesystem;

const fs::path kVectors = fs::path(IDEM_SOURCE_DIR) / ".." / "shared" / "testdata" / "jcs";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// outhex/X.txt: the expected bytes as whitespace-separated hex pairs.
std::string from_hex(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  std::string pair;
  while (in >> pair) out += static_cast<char>(std::stoi(pair, nullptr, 16));
  return out;
}

TEST(JcsVectors, EveryInputCanonicalizesToItsOutput) {
  ASSERT_TRUE(fs::is_directory(kVectors / "input"))
      << "RFC 8785 test vectors not found at " << kVectors
      << ": check out the shared/ directory beside the repository (see docs/json-parser.md)";
  int checked = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kVectors / "input")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    const fs::path output = kVectors / "output" / name;
    const fs::path outhex = kVectors / "outhex" / entry.path().stem().concat(".txt");
    ASSERT_TRUE(fs::exists(output)) << "no expected output for " << name;
    const std::string got = canonicalize(parse_strict(read_file(entry.path())));
    EXPECT_EQ(got, read_file(output)) << name;
    if (fs::exists(outhex)) {
      EXPECT_EQ(got, from_hex(read_file(outhex))) << name << " (outhex)";
    }
    ++checked;
  }
  // The upstream suite has six vectors; fewer means a broken checkout, not a passing test.
  EXPECT_GE(checked, 6) << "only " << checked << " vectors under " << kVectors;
}

}  // namespace
}  // namespace idem::json
