// format_double, canonical_number and is_exact on hand-picked values, boundaries included.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/error.hpp"
#include "core/json/number.hpp"

namespace idem::json {
namespace {

ErrorCode code_of(void (*f)(const char*), const char* arg) {
  try {
    f(arg);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no idem::Error for " << arg;
  return ErrorCode::Internal;
}

TEST(FormatDouble, FollowsEcmaScriptNumberToString) {
  EXPECT_EQ(format_double(0.0), "0");
  EXPECT_EQ(format_double(-0.0), "0");
  EXPECT_EQ(format_double(1), "1");
  EXPECT_EQ(format_double(-1), "-1");
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_double(4.5), "4.5");
  EXPECT_EQ(format_double(100), "100");
  EXPECT_EQ(format_double(1e20), "100000000000000000000");
  EXPECT_EQ(format_double(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(format_double(1e21), "1e+21");
  EXPECT_EQ(format_double(1.2345e21), "1.2345e+21");
  EXPECT_EQ(format_double(1e30), "1e+30");
  EXPECT_EQ(format_double(1.5e300), "1.5e+300");
  EXPECT_EQ(format_double(0.000001), "0.000001");
  EXPECT_EQ(format_double(0.000001234), "0.000001234");
  EXPECT_EQ(format_double(1e-7), "1e-7");
  EXPECT_EQ(format_double(1.5e-7), "1.5e-7");
  EXPECT_EQ(format_double(123e-20), "1.23e-18");
  EXPECT_EQ(format_double(5e-324), "5e-324");
  EXPECT_EQ(format_double(-5e-324), "-5e-324");
  EXPECT_EQ(format_double(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(format_double(std::numeric_limits<double>::min()), "2.2250738585072014e-308");
  EXPECT_EQ(format_double(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(format_double(333333333.33333329), "333333333.3333333");
}

TEST(FormatDouble, RefusesNaNAndInfinity) {
  for (const double v : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    try {
      format_double(v);
      ADD_FAILURE() << "no error for " << v;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::NumberPrecision);
    }
  }
}

TEST(CanonicalNumber, RoundsToTheNearestDouble) {
  EXPECT_EQ(canonical_number("0"), "0");
  EXPECT_EQ(canonical_number("-0"), "0");
  EXPECT_EQ(canonical_number("-0.0"), "0");
  EXPECT_EQ(canonical_number("0e10"), "0");
  EXPECT_EQ(canonical_number("100"), "100");
  EXPECT_EQ(canonical_number("-42"), "-42");
  EXPECT_EQ(canonical_number("4.50"), "4.5");
  EXPECT_EQ(canonical_number("1E30"), "1e+30");
  EXPECT_EQ(canonical_number("1e+2"), "100");
  EXPECT_EQ(canonical_number("2e-3"), "0.002");
  EXPECT_EQ(canonical_number("56.0"), "56");
  EXPECT_EQ(canonical_number("0.000000000000000000000000001"), "1e-27");
  EXPECT_EQ(canonical_number("333333333.33333329"), "333333333.3333333");
  EXPECT_EQ(canonical_number("9007199254740993"), "9007199254740992");
  EXPECT_EQ(canonical_number("123456789012345678901234567890"), "1.2345678901234568e+29");
  EXPECT_EQ(canonical_number("1e-400"), "0");
  EXPECT_EQ(canonical_number("-1e-400"), "0");
  EXPECT_EQ(canonical_number("2.5e-324"), "5e-324");
  EXPECT_EQ(canonical_number("1.7976931348623157e308"), "1.7976931348623157e+308");
}

TEST(CanonicalNumber, OverflowIsAPrecisionError) {
  auto canon = [](const char* s) { canonical_number(s); };
  EXPECT_EQ(code_of(canon, "1e400"), ErrorCode::NumberPrecision);
  EXPECT_EQ(code_of(canon, "-1.7976931348623159e308"), ErrorCode::NumberPrecision);
  EXPECT_EQ(code_of(canon, "1e99999999999999999999999"), ErrorCode::NumberPrecision);
}

TEST(CanonicalNumber, RefusesWhatIsNotAJsonNumber) {
  auto canon = [](const char* s) { canonical_number(s); };
  auto exact = [](const char* s) { is_exact(s); };
  for (const char* s : {"", "-", "01", "-01", ".5", "1.", "+1", "1e", "1e+", "abc", "NaN",
                        "inf", "0x10", "1 "}) {
    EXPECT_EQ(code_of(canon, s), ErrorCode::JsonInvalid) << s;
    EXPECT_EQ(code_of(exact, s), ErrorCode::JsonInvalid) << s;
  }
}

TEST(IsExact, SameDecimalValueAsTheCanonicalForm) {
  for (const char* s : {"0", "-0", "0.000", "0e-999", "4.50", "1E30", "1e30", "0.1", "56.0",
                        "2e-3", "-12", "9007199254740992", "123456789012345",
                        "1.7976931348623157e308", "5e-324", "0.30000000000000004",
                        "100e-2", "0.0012300e3"}) {
    EXPECT_TRUE(is_exact(s)) << s;
  }
  for (const char* s : {"9007199254740993", "333333333.33333329", "0.1000000000000000000001",
                        "1e400", "-1e400", "1e-400", "2.5e-324", "123456789012345678",
                        "1.00000000000000000000000000000000000000001"}) {
    EXPECT_FALSE(is_exact(s)) << s;
  }
}

// A decimal spelling reduced to "digits@exponent" (value 0.digits x 10^exponent), "0" for zero:
// a second, simple-minded implementation to check is_exact and the verbatim fast path against.
std::string normalized(const std::string& s) {
  std::string digits;
  long point = -1;
  long exp = 0;
  std::size_t i = s[0] == '-' ? 1 : 0;
  for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; ++i) {
    if (s[i] == '.') {
      point = static_cast<long>(digits.size());
    } else {
      digits += s[i];
    }
  }
  if (i < s.size()) exp = std::stol(s.substr(i + 1));
  if (point < 0) point = static_cast<long>(digits.size());
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return "0";
  const std::size_t last = digits.find_last_not_of('0');
  const std::string sign = s[0] == '-' ? "-" : "";
  return sign + digits.substr(first, last - first + 1) + "@" +
         std::to_string(point - static_cast<long>(first) + exp);
}

TEST(CanonicalNumber, AgreesWithTheDoubleRoundTripOnRandomDecimals) {
  std::mt19937_64 rng(20251129);
  for (int round = 0; round < 200000; ++round) {
    std::string s = rng() % 2 ? "-" : "";
    const int int_digits = static_cast<int>(rng() % 19);
    s += int_digits == 0 ? "0" : std::to_string(1 + rng() % 9);
    for (int k = 1; k < int_digits; ++k) s += static_cast<char>('0' + rng() % 10);
    if (rng() % 4 != 0) {
      s += '.';
      const int zeros = static_cast<int>(rng() % 9);
      for (int k = 0; k < zeros; ++k) s += '0';
      const int frac_digits = 1 + static_cast<int>(rng() % 18);
      for (int k = 0; k < frac_digits; ++k) s += static_cast<char>('0' + rng() % 10);
    }
    if (rng() % 8 == 0) s += "e" + std::to_string(static_cast<int>(rng() % 80) - 40);
    double d = 0;
    std::from_chars(s.data(), s.data() + s.size(), d);
    const std::string canonical = canonical_number(s);
    ASSERT_EQ(canonical, format_double(d)) << s;
    ASSERT_EQ(is_exact(s), normalized(s) == normalized(canonical)) << s << " -> " << canonical;
  }
}

}  // namespace
}  // namespace idem::json
