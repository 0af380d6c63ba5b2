// JSON numbers for RFC 8785: ECMAScript Number::toString formatting, canonical spellings, and the
// exactness test that warns a client when rounding to a double would change what it sent.
#include "core/json/number.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.hpp"

namespace idem::json {
namespace {

// A double's shortest round-trip form never needs more than 17 significant digits.
constexpr std::size_t kMaxDigits = 17;
// Longest format_double output is 25 bytes ("-0.0000012345678901234567").
constexpr std::size_t kFormatBuffer = 32;
// Exponents are clamped here: anything near it overflows or underflows a double anyway, and the
// clamp keeps the arithmetic on spellings like "1e99999999999999999999" from overflowing.
constexpr std::int64_t kExponentCap = 1'000'000'000'000;

// A decimal value as 0.d1d2...dk x 10^exponent, with d1 != 0 and dk != 0 (unless zero).
struct Decimal {
  bool negative = false;
  bool zero = true;
  std::int64_t exponent = 0;
  std::size_t count = 0;       // k, the number of significant digits
  char digits[kMaxDigits]{};   // the first min(k, kMaxDigits) of them
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads a JSON number spelling (RFC 8259 grammar, so "01", ".5", "1." and "+1" are refused).
bool parse_decimal(std::string_view s, Decimal& d) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    d.negative = true;
    ++i;
  }
  std::int64_t position = 0;  // index in the digit sequence, the '.' left out
  std::int64_t first = -1;
  std::int64_t last = -1;
  auto take = [&](char c) {
    if (c != '0') {
      if (first < 0) first = position;
      last = position;
    }
    if (first >= 0 && position - first < static_cast<std::int64_t>(kMaxDigits)) {
      d.digits[position - first] = c;
    }
    ++position;
  };
  const std::size_t int_start = i;
  while (i < s.size() && is_digit(s[i])) take(s[i++]);
  const std::int64_t int_digits = position;
  if (int_digits == 0 || (s[int_start] == '0' && int_digits > 1)) return false;
  if (i < s.size() && s[i] == '.') {
    const std::size_t frac_start = ++i;
    while (i < s.size() && is_digit(s[i])) take(s[i++]);
    if (i == frac_start) return false;
  }
  std::int64_t exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
    const std::size_t exp_start = i;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (exp < kExponentCap) exp = exp * 10 + (s[i] - '0');
    }
    if (i == exp_start) return false;
    if (exp_negative) exp = -exp;
  }
  if (i != s.size()) return false;
  if (first >= 0) {
    d.zero = false;
    d.count = static_cast<std::size_t>(last - first + 1);
    d.exponent = int_digits - first + exp;
  }
  return true;
}

// Spellings echoed in messages are cut short: a client may send a megabyte of digits.
std::string display(std::string_view spelling) {
  constexpr std::size_t kShown = 40;
  if (spelling.size() <= kShown) return std::string(spelling);
  return std::string(spelling.substr(0, kShown)) + "...";
}

Decimal parse_or_throw(std::string_view spelling) {
  Decimal d;
  if (!parse_decimal(spelling, d)) {
    throw Error(ErrorCode::JsonInvalid, "\"" + display(spelling) + "\" is not a JSON number");
  }
  return d;
}

// The shortest round-trip digits of a finite, positive value, as 0.d1...dk x 10^n.
struct Shortest {
  char digits[kMaxDigits];
  std::size_t count = 0;
  int n = 0;
};

Shortest shortest(double magnitude) {
  char buf[kFormatBuffer];
  // Scientific format without a precision is the shortest round-trip form, ties resolved to the
  // nearest value, which is exactly the digit choice ECMA-262 Number::toString requires.
  const auto end =
      std::to_chars(buf, buf + sizeof buf, magnitude, std::chars_format::scientific).ptr;
  Shortest s;
  const char* p = buf;
  s.digits[s.count++] = *p++;
  if (*p == '.') {
    for (++p; *p != 'e'; ++p) s.digits[s.count++] = *p;
  }
  ++p;  // 'e'
  if (*p == '+') ++p;  // from_chars takes '-' but not '+'
  int exp10 = 0;
  std::from_chars(p, end, exp10);
  s.n = exp10 + 1;
  return s;
}

// Writes the ECMAScript form of a nonzero finite double, given its sign and its shortest digits,
// to `out` (kFormatBuffer bytes); returns the length.
std::size_t format_shortest(bool negative, const Shortest& s, char* out) {
  char* p = out;
  if (negative) *p++ = '-';
  const int k = static_cast<int>(s.count);
  const int n = s.n;
  if (k <= n && n <= 21) {  // integer: the digits, then n-k zeros
    std::memcpy(p, s.digits, k);
    std::memset(p + k, '0', n - k);
    p += n;
  } else if (0 < n && n <= 21) {  // the decimal point falls inside the digits
    std::memcpy(p, s.digits, n);
    p += n;
    *p++ = '.';
    std::memcpy(p, s.digits + n, k - n);
    p += k - n;
  } else if (-6 < n && n <= 0) {  // "0." then -n zeros, then the digits
    *p++ = '0';
    *p++ = '.';
    std::memset(p, '0', -n);
    p += -n;
    std::memcpy(p, s.digits, k);
    p += k;
  } else {  // exponent form: d[.ddd]e+x / e-x
    *p++ = s.digits[0];
    if (k > 1) {
      *p++ = '.';
      std::memcpy(p, s.digits + 1, k - 1);
      p += k - 1;
    }
    *p++ = 'e';
    const int e = n - 1;
    *p++ = e < 0 ? '-' : '+';
    p = std::to_chars(p, out + kFormatBuffer, e < 0 ? -e : e).ptr;
  }
  return static_cast<std::size_t>(p - out);
}

// Writes format_double(value) to `out` (kFormatBuffer bytes); returns the length.
std::size_t format_to(double value, char* out) {
  if (!std::isfinite(value)) {
    throw Error(ErrorCode::NumberPrecision, "NaN and Infinity cannot be represented in JSON");
  }
  if (value == 0) {  // also -0, which ECMAScript prints as "0"
    out[0] = '0';
    return 1;
  }
  return format_shortest(value < 0, shortest(std::fabs(value)), out);
}

// True when the spelling already is its canonical form, so the common case (ids, counts, prices
// like "19.99") skips the float round trip: a plain decimal (no exponent, no leading zeros, no
// trailing fraction zeros) of at most 15 significant digits, and at least 1e-6 when below 1.
// Why that is exact: 15-digit decimals are more than 1e-15 apart relative to their size, a
// double's rounding interval is at most 2^-52 (2.2e-16) wide, so the nearest double's shortest
// round-trip digits are the spelling's own; ECMAScript prints them in plain notation for
// 1e-6 <= |x| < 1e21, exactly as written.
bool is_canonical_already(std::string_view s) {
  std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  const std::size_t int_start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  const std::size_t int_len = i - int_start;
  if (int_len == 0 || int_len > 15) return false;
  const bool below_one = s[int_start] == '0';
  if (below_one && int_len > 1) return false;
  if (i == s.size()) return !(below_one && int_start == 1);  // "-0" is canonically "0"
  if (s[i] != '.') return false;
  const std::size_t frac_start = ++i;
  while (i < s.size() && is_digit(s[i])) ++i;
  const std::size_t frac_len = i - frac_start;
  if (i != s.size() || frac_len == 0 || s.back() == '0') return false;
  if (!below_one) return int_len + frac_len <= 15;
  std::size_t zeros = 0;
  while (s[frac_start + zeros] == '0') ++zeros;
  return zeros <= 5 && frac_len - zeros <= 15;
}

}  // namespace

std::string format_double(double value) {
  char buf[kFormatBuffer];
  return std::string(buf, format_to(value, buf));
}

namespace detail {

void append_canonical_number(std::string& out, std::string_view spelling) {
  char buf[kCanonicalNumberBuffer];
  bool exact = false;  // not asked for here
  out.append(buf, canonical_number_exact(spelling, buf, exact));
}

// append_canonical_number and is_exact in one: the spelling is read, converted and its shortest
// digits found once, for both answers. Same results, same errors, as calling the two.
std::size_t canonical_number_exact(std::string_view spelling, char* out, bool& exact) {
  static_assert(kCanonicalNumberBuffer >= kFormatBuffer, "room for format_shortest");
  if (is_canonical_already(spelling)) {
    // At most 23 bytes: 15 significant digits, a sign, a point and 5 zeros after "0.".
    exact = true;
    std::memcpy(out, spelling.data(), spelling.size());
    return spelling.size();
  }
  const Decimal d = parse_or_throw(spelling);
  double value = 0;
  const auto result = std::from_chars(spelling.data(), spelling.data() + spelling.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    // from_chars reports overflow and underflow alike; the decimal exponent tells them apart.
    if (d.exponent > 0) {
      throw Error(ErrorCode::NumberPrecision,
                  "number " + display(spelling) + " is too large for an IEEE double",
                  "send it as a string");
    }
    exact = d.zero;  // underflow rounds to zero, as JCS requires, but is not exact
    out[0] = '0';
    return 1;
  }
  if (value == 0) {  // also -0, which ECMAScript prints as "0"
    exact = d.zero;
    out[0] = '0';
    return 1;
  }
  const Shortest s = shortest(std::fabs(value));
  exact = !d.zero && d.count <= kMaxDigits && s.count == d.count && s.n == d.exponent &&
          std::memcmp(s.digits, d.digits, d.count) == 0;
  return format_shortest(value < 0, s, out);
}

}  // namespace detail

std::string canonical_number(std::string_view spelling) {
  std::string out;
  detail::append_canonical_number(out, spelling);
  return out;
}

bool is_exact(std::string_view spelling) {
  if (is_canonical_already(spelling)) return true;
  const Decimal d = parse_or_throw(spelling);
  if (d.zero) return true;  // every zero, signed or not, is the double 0
  if (d.count > kMaxDigits) return false;
  double value = 0;
  const auto result = std::from_chars(spelling.data(), spelling.data() + spelling.size(), value);
  if (result.ec != std::errc() || value == 0) return false;  // overflow or underflow
  const Shortest s = shortest(std::fabs(value));
  return s.count == d.count && s.n == d.exponent &&
         std::memcmp(s.digits, d.digits, d.count) == 0;
}

}  // namespace idem::json
