// The state machines, cached per backend. Loaded from idem.machine_states/machine_transitions on
// first use and dropped when a statement changes those tables (their trigger broadcasts a relcache
// invalidation, which reaches every backend), so a check costs no SQL on the hot path.
#pragma once

#include "core/machines/machine_table.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::machines {

// The current table; loads it if needed (SPI; may raise).
const MachineTable& cached_table();

// PostgreSQL only (call it guarded): a transition's guard, called with the row as jsonb; a NULL
// answer counts as false.
bool guard_holds(Oid guard, Datum row);

// Registered once in _PG_init.
void register_invalidation();

}  // namespace idem::machines
