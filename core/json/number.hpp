// JSON numbers as RFC 8785 needs them: ECMAScript Number::toString of the nearest IEEE double.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace idem::json {

// ECMAScript formatting of a double (shortest round-trip digits; plain notation for
// 1e-7 <= |x| < 1e21, exponent form "1e+21"/"1e-7" otherwise; -0 -> "0").
// Throws ErrorCode::NumberPrecision for NaN/Infinity (not representable in JSON).
std::string format_double(double value);

// Canonical form of a JSON number spelling: the spelling parsed to the nearest double, then
// format_double. Throws ErrorCode::NumberPrecision when the value overflows a double.
std::string canonical_number(std::string_view spelling);

// True when the canonical form denotes exactly the same decimal value as `spelling`
// ("4.50" and "1E30" are exact; "9007199254740993" and "333333333.33333329" are not).
bool is_exact(std::string_view spelling);

namespace detail {
// canonical_number appended to `out` without a temporary string: the canonicalizer's hot path.
void append_canonical_number(std::string& out, std::string_view spelling);
// The same written to `out` (room for kCanonicalNumberBuffer bytes), returning its length, with
// is_exact(spelling) in `exact`: the one-pass canonicalizer's single conversion of a number.
inline constexpr std::size_t kCanonicalNumberBuffer = 32;
std::size_t canonical_number_exact(std::string_view spelling, char* out, bool& exact);
}  // namespace detail

}  // namespace idem::json
