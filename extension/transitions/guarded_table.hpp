// A registered table as one of its two triggers sees it: the BEFORE guard
// (idem.enforce_transitions) refuses transitions the machine does not allow, the AFTER log
// (idem._log_transitions, created by idem.register_machine_table) logs the rows PostgreSQL wrote.
// The log is written after the row, not before: an INSERT ... ON CONFLICT DO NOTHING runs the
// BEFORE trigger for a row it then does not insert. The guard refuses to act without the log
// trigger, and the log trigger logs only what a guard saw: nothing is guarded unlogged, or
// logged unguarded.
#pragma once

#include "extension/pg/postgres.hpp"
#include "extension/transitions/machine_tables.hpp"

namespace idem::transitions {

struct GuardedTable {
  machines::TableRegistration reg;
  Oid owner;  // the log's owner: registrations are read and the log written as that role
  int status_col;
  int key_col;  // 0: none registered
  int tenant_col;
};

// The registration guarding the trigger's table (status_arg null: its only one), with its
// columns' numbers. Throws ERR_MACHINE_TABLE_UNREGISTERED or ERR_ARGUMENT_INVALID naming the
// fix. Calls PostgreSQL guarded.
GuardedTable resolve(TriggerData* td, const char* status_arg);

// Whether an UPDATE of the column fires the trigger (no column list: every update does).
bool fires_on(const Trigger* trigger, int attnum);

// Throw unless the table has its AFTER log trigger for the status column, firing in this session
// on every INSERT and UPDATE (a BEFORE trigger may set the status of an UPDATE that names other
// columns), without a WHEN clause.
void require_log_trigger(const TriggerData* td, const GuardedTable& table);

// Whether a BEFORE guard for the status column fired on this event (enabled for this session's
// session_replication_role). A write no guard sees (a guard of UPDATEs only, an INSERT) is not
// logged either, as before 0.3.5. A guard with a WHEN clause throws: what it skipped went
// unchecked.
bool guard_fired(const TriggerData* td, const char* status_column, int status_col);

// ERR_ARGUMENT_INVALID: the guard on `table` has a WHEN clause.
[[noreturn]] void throw_conditional_guard(const char* table);

// The row names its tenant, and the session may act for it, and on an UPDATE for the old
// row's too (a row re-labelled to one's own tenant is still another's), else ERR_TENANT_FORBIDDEN.
void require_row_tenants(const TriggerData* td, const GuardedTable& table, const char* tenant);

// A value of the row as text (null for NULL), guarded.
const char* column_value(HeapTuple tuple, TupleDesc desc, int attnum);

}  // namespace idem::transitions
