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
// The elements of a text[] of plain words in its text form ({caller,resource}); quoted
// elements are not read (acquire sends none).
std::vector<std::string> text_array(const std::string& text);

}  // namespace idem::sql_text
