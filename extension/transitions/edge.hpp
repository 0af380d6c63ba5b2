// Whether the machine lets a row move from one state to another, as both triggers ask it.
#pragma once

#include <string>

#include "extension/pg/postgres.hpp"

namespace idem::transitions {

struct EdgeCheck {
  std::string refusal;     // empty: allowed (once the guard, if any, holds)
  Oid guard_oid;           // InvalidOid: no guard
  std::string guard_name;  // copied: a guard may run SQL that empties the machine cache
};

// from null: a new row (or a NULL status), which may start in any state of the machine.
// Throws ERR_MACHINE_UNKNOWN for a machine that is not defined (SPI on a cold cache).
EdgeCheck check_edge(const char* machine, const char* from, const char* to);

// The edge's guard asked about the row (as jsonb), as the role that changed it. Guarded.
bool guard_holds(const EdgeCheck& edge, HeapTuple row, TupleDesc desc);

}  // namespace idem::transitions
