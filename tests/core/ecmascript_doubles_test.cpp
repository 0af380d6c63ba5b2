// format_double against the reference: 100,000 doubles printed by Node.js's JSON.stringify (which
// is ECMAScript Number::toString). Node must be on PATH; without it the test fails, never skips.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/json/number.hpp"

namespace idem::json {
namespace {

namespace fs = std::filesystem;

constexpr int kCount = 100000;

double from_bits(std::uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

std::uint64_t to_bits(double d) {
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

double parse(const std::string& s) {
  double d = 0;
  std::from_chars(s.data(), s.data() + s.size(), d);
  return d;
}

// `steps` ulps away from `d`, towards +inf or -inf.
double walk(double d, std::uint64_t steps, bool up) {
  for (std::uint64_t i = 0; i < steps; ++i) d = std::nextafter(d, up ? HUGE_VAL : -HUGE_VAL);
  return d;
}

// A fixed mix of the doubles most likely to expose a formatting mistake.
std::vector<double> sample_doubles() {
  std::mt19937_64 rng(0x8785'2024);
  std::vector<double> out;
  out.reserve(kCount);
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  while (out.size() < kCount) {
    double d = 0;
    switch (out.size() % 10) {
      case 0: case 1: case 2: {  // any finite bit pattern
        std::uint64_t bits = rng();
        while (((bits >> 52) & 0x7FF) == 0x7FF) bits = rng();
        d = from_bits(bits);
        break;
      }
      case 3:  // integers, small and up to 2^53
        d = pick(2) ? static_cast<double>(pick(2'000'001)) - 1e6
                    : static_cast<double>(pick(std::uint64_t{1} << 53));
        break;
      case 4:  // around 1e21, where the exponent form begins
        d = walk(pick(2) ? 1e21 : 1e20 * static_cast<double>(1 + pick(20)), pick(600), pick(2));
        break;
      case 5:  // around 1e-7, where the other exponent form begins
        d = walk(pick(2) ? 1e-7 : 1e-8 * static_cast<double>(1 + pick(20)), pick(600), pick(2));
        break;
      case 6:  // subnormals and zeros
        d = pick(50) == 0 ? 0.0 : from_bits(rng() & ((std::uint64_t{1} << 52) - 1));
        break;
      case 7:  // powers of ten and their neighbours
        d = walk(parse("1e" + std::to_string(static_cast<int>(pick(632)) - 323)), pick(3), pick(2));
        break;
      case 8:  // short decimals, whose digits the shortest form must give back
        d = parse(std::to_string(pick(1'000'000'000)) + "e" +
                  std::to_string(static_cast<int>(pick(60)) - 40));
        break;
      default:  // log-uniform over the plain-notation range and a little beyond
        d = std::pow(10.0, std::uniform_real_distribution<double>(-9, 23)(rng));
        break;
    }
    if (pick(2)) d = -d;
    out.push_back(d);
  }
  return out;
}

const char kNodeScript[] =
    "const fs = require('fs');\n"
    "const out = [];\n"
    "for (const line of fs.readFileSync(process.argv[2], 'utf8').split('\\n')) {\n"
    "  if (line) out.push(JSON.stringify(Buffer.from(line, 'hex').readDoubleBE(0)));\n"
    "}\n"
    "process.stdout.write(out.join('\\n') + '\\n');\n";

// Runs node over the doubles; returns its lines, or an empty vector with `error` set.
std::vector<std::string> node_strings(const std::vector<double>& values, std::string& error) {
  std::string dir_template = (fs::temp_directory_path() / "idem_ecma_XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr) {
    error = "cannot create a temporary directory";
    return {};
  }
  const fs::path dir = dir_template;
  std::ofstream(dir / "print.js") << kNodeScript;
  {
    std::ofstream hex(dir / "doubles.hex");
    char buf[20];
    for (const double d : values) {
      std::snprintf(buf, sizeof buf, "%016llx\n", static_cast<unsigned long long>(to_bits(d)));
      hex << buf;
    }
  }
  const std::string command =
      "node '" + (dir / "print.js").string() + "' '" + (dir / "doubles.hex").string() + "' 2>&1";
  std::vector<std::string> lines;
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char chunk[65536];
    std::size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) output.append(chunk, n);
    const int status = pclose(pipe);
    if (status != 0) {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : status;
      error = "`node` failed (exit status " + std::to_string(code) +
              "); it must be on PATH to check format_double. Output: " + output.substr(0, 500);
    }
  } else {
    error = "cannot run node";
  }
  fs::remove_all(dir);
  if (!error.empty()) return {};
  std::size_t start = 0;
  for (std::size_t nl; (nl = output.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(output.substr(start, nl - start));
  }
  return lines;
}

TEST(EcmaScriptDoubles, FormatDoubleMatchesNodeJsonStringify) {
  const std::vector<double> values = sample_doubles();
  std::string error;
  const std::vector<std::string> expected = node_strings(values, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(expected.size(), values.size()) << "node printed a different number of lines";
  int mismatches = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string got = format_double(values[i]);
    if (got == expected[i]) continue;
    if (++mismatches <= 10) {
      ADD_FAILURE() << "double #" << i << " (bits " << std::hex << to_bits(values[i]) << std::dec
                    << "): format_double gives " << got << ", node gives " << expected[i];
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << values.size() << " doubles";
}

}  // namespace
}  // namespace idem::json
