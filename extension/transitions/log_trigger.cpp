// idem._log_transitions(status column): the AFTER INSERT OR UPDATE row trigger that
// idem.register_machine_table creates beside a table's guard. It logs each transition once
// PostgreSQL has written the row, so a row the statement did not write (INSERT ... ON CONFLICT
// DO NOTHING runs the BEFORE trigger first) leaves nothing in the trail. It fires on every
// UPDATE, not only those naming the status (a BEFORE trigger may set it), and checks the row as
// written once more: the edge, the tenants, and the edge's guard when the guard trigger did not
// see this status (checked_rows.hpp), since a BEFORE trigger firing after it may change them.
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "extension/binding_cache.hpp"
#include "extension/boundary.hpp"
#include "extension/machine_cache.hpp"
#include "extension/transitions/checked_rows.hpp"
#include "extension/transitions/edge.hpp"
#include "extension/transitions/guarded_table.hpp"
#include "extension/transitions/transition_log.hpp"

namespace idem {
namespace {

bool same_text(const char* a, const char* b) { return a != nullptr && b != nullptr && std::strcmp(a, b) == 0; }

Datum log_transitions(FunctionCallInfo fcinfo) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw Error(ErrorCode::ArgumentInvalid, "idem._log_transitions() must be called as a trigger");
  TriggerData* td = reinterpret_cast<TriggerData*>(fcinfo->context);
  const bool is_update = TRIGGER_FIRED_BY_UPDATE(td->tg_event);
  if (!TRIGGER_FIRED_AFTER(td->tg_event) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) || !(is_update || TRIGGER_FIRED_BY_INSERT(td->tg_event)) ||
      td->tg_trigger->tgnargs != 1) {
    throw Error(ErrorCode::ArgumentInvalid, "idem._log_transitions(status column) must be an AFTER INSERT OR UPDATE ... FOR EACH ROW trigger",
                "idem.register_machine_table creates it; do not create it by hand.");
  }
  // First, before any SQL: a table registered without a guard, and an update that leaves the
  // status where no role is bound to tenants, cost a write no more.
  TupleDesc desc = td->tg_relation->rd_att;
  const char* status_arg = td->tg_trigger->tgargs[0];
  const int status_attnum = SPI_fnumber(desc, status_arg);  // only looks the name up: cannot elog
  if (status_attnum <= 0 || !transitions::guard_fired(td, status_arg, status_attnum)) return PointerGetDatum(nullptr);
  HeapTuple row = is_update ? td->tg_newtuple : td->tg_trigtuple;
  const char* to = transitions::column_value(row, desc, status_attnum);
  const char* from = is_update ? transitions::column_value(td->tg_trigtuple, desc, status_attnum) : nullptr;
  const bool unchanged = is_update && same_text(from, to);
  if (unchanged && !bindings::may_be_bound(bindings::Table::Tenant)) return PointerGetDatum(nullptr);

  const transitions::GuardedTable guarded = transitions::resolve(td, status_arg);
  const machines::TableRegistration& reg = guarded.reg;
  const char* tenant = transitions::column_value(row, desc, guarded.tenant_col);
  transitions::require_row_tenants(td, guarded, tenant);
  if (unchanged) return PointerGetDatum(nullptr);

  const transitions::EdgeCheck edge = transitions::check_edge(reg.machine, from, to);
  std::string refusal = edge.refusal;
  const bool guarded_edge = refusal.empty() && edge.guard_oid != InvalidOid;
  const char* row_key = guarded.key_col ? transitions::column_value(row, desc, guarded.key_col) : nullptr;
  if (guarded_edge) {
    // The guard trigger's answer for this row going there; asked again only when no guard saw
    // it (a guard that reads the table would now see this row written).
    const std::optional<bool> seen = transitions::checked_rows::take(RelationGetRelid(td->tg_relation), row_key, to);
    if (!(seen ? *seen : transitions::guard_holds(edge, row, desc))) {
      refusal = machines::guard_refusal(reg.machine, from, to, edge.guard_name);
    }
  }
  if (!refusal.empty()) {
    throw Error(ErrorCode::InvalidTransition,
                refusal + " (as written to " + reg.table_name + ": a BEFORE trigger firing after idem.enforce_transitions changed the row)",
                "A BEFORE trigger that sets the status must fire before the guard: triggers fire in name order.");
  }
  transitions::LogEntry entry{reg.machine,
                              RelationGetRelid(td->tg_relation),
                              reg.table_name,
                              tenant,
                              row_key,
                              from,
                              to,
                              guarded_edge ? edge.guard_name.c_str() : nullptr,
                              guarded_edge ? 1 : -1,
                              "applied"};
  pg::call(transitions::append_log, entry, guarded.owner);
  return PointerGetDatum(nullptr);
}

}  // namespace
}  // namespace idem

IDEM_SQL_FUNCTION(idem_log_transitions, idem::log_transitions)
