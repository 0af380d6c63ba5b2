// Strict JSON text parser (RFC 8259 as restricted by I-JSON, RFC 7493).
#pragma once

#include <cstddef>
#include <string_view>

#include "core/json/value.hpp"

namespace idem::json {

// Deepest nesting of arrays/objects accepted; deeper input is refused, never recursed into.
inline constexpr std::size_t kMaxDepth = 128;

// Parses `text` into a Value. Refuses, with ErrorCode::JsonInvalid and a message that names the
// byte offset: invalid UTF-8, lone surrogates (also in \u escapes), duplicate member names,
// trailing commas, comments, leading zeros, NaN/Infinity, control characters in strings,
// trailing content after the document, and nesting deeper than kMaxDepth; also a UTF-8 byte
// order mark (RFC 8259 forbids sending one). Offsets count bytes from 0 ("at byte 3"): the
// offending byte for lexical errors, the start of the unexpected token or member name otherwise.
// A number beyond the range of a double is refused with ErrorCode::NumberPrecision instead.
// Implementation and its limits: docs/json-parser.md.
Value parse_strict(std::string_view text);

}  // namespace idem::json
