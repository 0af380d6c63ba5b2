// RFC 8785 (JSON Canonicalization Scheme) serialization.
#pragma once

#include <string>

#include "core/json/value.hpp"

namespace idem::json {

// RFC 8785 to the letter: members sorted by UTF-16 code units, ECMAScript numbers, minimal
// string escapes, no whitespace. Numbers are rounded to the nearest double, as JCS requires.
std::string canonicalize(const Value& doc);

// Throws ErrorCode::NumberPrecision, naming the RFC 6901 pointer of the first number whose
// canonical form denotes a different decimal value than its spelling.
void require_exact_numbers(const Value& doc);

}  // namespace idem::json
