// RFC 6901 JSON Pointers, used to exclude volatile members (trace ids, timestamps) before hashing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/json/value.hpp"

namespace idem::json {

// Splits a pointer into unescaped reference tokens ("~1" -> "/", "~0" -> "~").
// Throws ErrorCode::JsonPointerInvalid for a non-empty pointer not starting with '/' or a bad
// '~' escape.
std::vector<std::string> parse_pointer(std::string_view pointer);

// parse_pointer for a pointer naming a value to remove: also refuses the empty pointer (the whole
// document) with JsonPointerInvalid, in remove_pointers' words.
std::vector<std::string> parse_exclusion(std::string_view pointer);

// Escapes one reference token for display in a pointer.
std::string escape_token(std::string_view token);

// Removes the value each pointer names. A pointer that names nothing is ignored (the member is
// optional); the empty pointer (the whole document) is refused with JsonPointerInvalid.
// Every pointer is resolved against the document as given, so the order of `pointers` does not
// matter ("/items/0" and "/items/1" remove the first two elements). On an array, a token names an
// element only if it is a decimal index without leading zeros below the size; "-" and anything
// else name nothing (RFC 6901 section 4).
void remove_pointers(Value& doc, const std::vector<std::string>& pointers);

}  // namespace idem::json
