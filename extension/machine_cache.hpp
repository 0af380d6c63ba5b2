// The state machines, cached per backend. Loaded from idem.machine_states/machine_transitions on
// first use and dropped when a statement changes those tables (their trigger broadcasts a relcache
// invalidation, which reaches every backend), so a check costs no SQL on the hot path.
#pragma once

#include "core/machines/machine_table.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::machines {

// The current table; loads it if needed (SPI; may raise). Loaded as the owner of the machine
// tables, under the latest snapshot: a transaction's old snapshot must not refill the cache with
// rows a committed change has replaced (the invalidation that emptied it will not come again).
// The returned reference is valid until the next call that may run SQL (a guard may change the
// tables): copy what you need first.
const MachineTable& cached_table();

// Owner of idem.transition_log (the extension's owner): the trigger writes the log as that role.
Oid log_owner();

// PostgreSQL only (call it guarded): a transition's guard, called with the row as jsonb; a NULL
// answer counts as false. A guard must still exist, be a plain function (row jsonb) -> boolean
// owned by a superuser, and be executable by the current role; otherwise ERR_ARGUMENT_INVALID
// (raised as a PostgreSQL error with our SQLSTATE). It runs as the role that asked.
bool guard_holds(Oid guard, Datum row);

// On a relcache invalidation of relid (InvalidOid: all): forget the machines when it is one of
// their tables.
void forget_relation(Oid relid);

}  // namespace idem::machines
