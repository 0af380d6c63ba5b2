// Datum <-> C++ conversions shared by the SQL-callable functions. Each PostgreSQL call they make
// while a C++ object may be alive is one guarded call (pg::call).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hash/sha256.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::datum {

// The bytes of a (detoasted) text or bytea value; valid while the value is.
inline std::string_view view(const struct varlena* v) {
  return {VARDATA_ANY(v), static_cast<std::size_t>(VARSIZE_ANY_EXHDR(v))};
}

// Argument n as text bytes, or nullopt when SQL NULL. Detoasting may elog: call it before
// any C++ object with a destructor is alive in the calling frame.
std::optional<std::string_view> text_arg(FunctionCallInfo fcinfo, int n);

// A 32-byte bytea argument (a scope digest) as a Digest; ERR_ARGUMENT_INVALID for NULL or another length.
hash::Digest digest_arg(FunctionCallInfo fcinfo, int n, const char* what);

// A text[] argument as strings; NULL elements are refused with `null_error_message`.
std::vector<std::string> text_array_arg(FunctionCallInfo fcinfo, int n, const char* what);

// Microseconds of elapsed time in an interval: a day is 24 hours and a month 30 days, whatever the
// session's TimeZone (a calendar day across a DST change is 23 or 25 hours). nullopt on overflow.
std::optional<int64_t> elapsed_usecs(const Interval& interval);
// A new interval Datum of exactly `usecs` microseconds (no day or month part).
Datum interval_datum(int64_t usecs);

// A new text / bytea Datum holding these bytes.
Datum text_datum(std::string_view bytes);
Datum bytea_datum(const hash::Digest& digest);
Datum bytea_datum(std::string_view bytes);
// A new one-dimensional text[] Datum of these strings.
Datum text_array_datum(const std::vector<std::string>& items);

}  // namespace idem::datum
