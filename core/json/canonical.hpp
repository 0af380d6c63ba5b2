// RFC 8785 (JSON Canonicalization Scheme) serialization.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json/value.hpp"

namespace idem::json {

// RFC 8785 to the letter: members sorted by UTF-16 code units, ECMAScript numbers, minimal
// string escapes, no whitespace. Numbers are rounded to the nearest double, as JCS requires.
std::string canonicalize(const Value& doc);

// Throws ErrorCode::NumberPrecision, naming the RFC 6901 pointer of the first number whose
// canonical form denotes a different decimal value than its spelling.
void require_exact_numbers(const Value& doc);

// parse_strict, remove_pointers(exclude), require_exact_numbers and canonicalize, in one pass over
// the text and without building a Value (canonical_text.cpp): the same bytes, and the same
// refusal (code and message) as those four run one after the other would give.
std::string canonicalize_text(std::string_view text, const std::vector<std::string>& exclude = {});
// The same into `out` (cleared first), so a caller can keep one buffer.
void canonicalize_text(std::string_view text, const std::vector<std::string>& exclude,
                       std::string& out);

namespace detail {
// canonicalize_text handing its bytes to `consume` straight from the thread's buffer (valid only
// during the call): what fingerprint_text hashes.
void with_canonical_text(std::string_view text, const std::vector<std::string>& exclude,
                         const std::function<void(std::string_view)>& consume);
}  // namespace detail

}  // namespace idem::json
