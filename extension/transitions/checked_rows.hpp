// What the guard trigger asked a row's guard, for the log trigger of the same row: the log
// trigger must not ask again (a guard that reads the table would see the row it guards already
// written), but must ask when the status it logs is not the one the guard checked (a BEFORE
// trigger firing after the guard changed it). Backend-local, one transaction's rows at a time.
#pragma once

#include <optional>

#include "extension/pg/postgres.hpp"

namespace idem::transitions::checked_rows {

// The guard trigger: the row (table, row key or null, new status) passed its guard, or not.
void remember(Oid relid, const char* row_key, const char* to, bool guard_result);

// The log trigger: the guard's answer for that row, once (nullopt: no guard saw it go there).
std::optional<bool> take(Oid relid, const char* row_key, const char* to);

}  // namespace idem::transitions::checked_rows
