// One row of idem.transition_log, written as the log's owner: the role that changed the guarded
// row cannot write the log itself, so it cannot forge rows.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::transitions {

struct LogEntry {
  const char* machine;
  Oid relid;
  const char* table_name;  // schema-qualified, quoted where needed
  const char* tenant;
  const char* row_key;     // may be null
  const char* from;        // null for an INSERT
  const char* to;
  const char* guard_name;  // null when no guard was asked
  int guard_result;        // -1 not asked
  const char* outcome;     // applied | skipped
};

// PostgreSQL only (call it guarded). On an error the transaction's abort restores the user.
void append_log(const LogEntry& entry, Oid owner);

}  // namespace idem::transitions
