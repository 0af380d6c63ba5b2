// The text of the hot path's generated statements (from the column lists in *.def), built once
// at library load. C++ only: no PostgreSQL call.
#pragma once

#include <string>
#include <string_view>

namespace idem::hot {

// "a, b, c" of n names.
std::string joined(const char* const* names, int n);

// "$1, $2, ..., $n".
std::string placeholders(int n);

// `text` with each {name} replaced by $k, k the 1-based position of name in `params`; an unknown
// name is a bug in a .def file and throws std::logic_error.
std::string with_params(std::string_view text, const char* const* params, int n);

}  // namespace idem::hot
