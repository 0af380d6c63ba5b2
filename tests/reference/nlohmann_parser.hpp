// The previous parse_strict, on nlohmann-json's SAX parser: kept as the independent reference the
// hand-written parser (core/json/parser.cpp) is tested and fuzzed against. Tests and fuzzers only.
#pragma once

#include <string_view>

#include "core/json/value.hpp"

namespace idem::json::reference {

// Same contract as idem::json::parse_strict (same Value, ErrorCodes, byte offsets and, apart from
// NUL bytes outside strings, the same messages). nlohmann takes a NUL byte outside a string for the
// end of the input; this wrapper refuses it at the NUL's offset instead, as parse_strict does.
Value parse_strict_nlohmann(std::string_view text);

}  // namespace idem::json::reference
