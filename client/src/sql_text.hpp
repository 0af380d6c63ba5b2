// The text forms the client sends and reads for parameters PostgreSQL has no text-safe C string
// for: bytea as \x hex (text parameters never carry NUL), and an interval in milliseconds.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "idem/types.hpp"

namespace idem::sql_text {

std::string hex_bytea(std::string_view bytes);
// The bytes of a bytea column in hex output (bytea_output = hex); DatabaseError otherwise.
std::string unhex_bytea(const std::string& text);
// "<n> milliseconds"; NULL for nullopt (the server's default).
SqlValue interval(const std::optional<std::chrono::milliseconds>& d);
// The elements of a one-dimensional text[] in its text form: {caller,resource}, or quoted
// ({"","/first name","/a\\"b"}) as JSON pointers may need; NULL elements left out.
std::vector<std::string> text_array(const std::string& text);

}  // namespace idem::sql_text
