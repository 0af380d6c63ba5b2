// idem.enforce_transitions([machine, column [, key_column [, on_refusal]]]): the BEFORE INSERT OR
// UPDATE row trigger that makes a registered table's status column follow its state machine. It
// acts only on a table an operator registered with idem.register_machine_table (the log is
// written as its owner, so an unregistered table would let any role write trail rows for any
// tenant), takes the machine and columns from the registration (arguments, when given, must agree
// with it), and refuses a row of a tenant the session is not bound to. A transition it lets
// through is logged by the table's AFTER trigger (log_trigger.cpp) once PostgreSQL wrote the row.
// on_refusal 'raise' (default) fails the statement with ERR_INVALID_TRANSITION (only the server
// log keeps the refusal); 'skip' leaves the row unchanged, lets the statement go on, and logs
// the refusal, which then commits with the transaction.
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

Datum enforce_transitions(FunctionCallInfo fcinfo) {
  if (!CALLED_AS_TRIGGER(fcinfo)) {
    throw Error(ErrorCode::ArgumentInvalid, "idem.enforce_transitions() must be called as a trigger");
  }
  TriggerData* td = reinterpret_cast<TriggerData*>(fcinfo->context);
  const bool is_insert = TRIGGER_FIRED_BY_INSERT(td->tg_event);
  const bool is_update = TRIGGER_FIRED_BY_UPDATE(td->tg_event);
  if (!TRIGGER_FIRED_BEFORE(td->tg_event) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) || !(is_insert || is_update)) {
    throw Error(ErrorCode::ArgumentInvalid, "idem.enforce_transitions() must be a BEFORE INSERT OR UPDATE ... FOR EACH ROW trigger");
  }
  const Trigger* trigger = td->tg_trigger;
  if (trigger->tgnargs == 1 || trigger->tgnargs > 4) {
    throw Error(ErrorCode::ArgumentInvalid,
                "idem.enforce_transitions takes no arguments, or (machine, status column [, key column [, 'raise' | 'skip']])");
  }
  const char* mode = trigger->tgnargs > 3 ? trigger->tgargs[3] : "raise";
  const bool skip = std::strcmp(mode, "skip") == 0;
  if (!skip && std::strcmp(mode, "raise") != 0) {
    throw Error(ErrorCode::ArgumentInvalid, std::string("idem.enforce_transitions: on_refusal must be 'raise' or 'skip', not '") + mode + "'");
  }
  if (td->tg_relation->rd_rel->relpersistence == RELPERSISTENCE_TEMP) {
    throw Error(ErrorCode::ArgumentInvalid,
                "idem.enforce_transitions: a temporary table's transitions would outlive it in the log",
                "Guard a permanent table.");
  }
  if (trigger->tgqual != nullptr) transitions::throw_conditional_guard(RelationGetRelationName(td->tg_relation));
  const char* status_arg = trigger->tgnargs >= 2 ? trigger->tgargs[1] : nullptr;
  const transitions::GuardedTable guarded = transitions::resolve(td, status_arg);
  const machines::TableRegistration& reg = guarded.reg;
  const char* machine = reg.machine;
  const char* reg_key = reg.key_column ? reg.key_column : "";
  const bool args_agree = trigger->tgnargs == 0 ||
                          (std::strcmp(trigger->tgargs[0], reg.machine) == 0 &&
                           (trigger->tgnargs < 3 || std::strcmp(trigger->tgargs[2], reg_key) == 0));
  if (!args_agree) {
    throw Error(ErrorCode::ArgumentInvalid,
                std::string("idem.enforce_transitions on ") + reg.table_name + ": the trigger's arguments differ from the registration (machine " +
                    reg.machine + ", status column " + reg.status_column + ", key column " + (reg.key_column ? reg.key_column : "none") + ")",
                "Create the trigger without arguments (EXECUTE FUNCTION idem.enforce_transitions()), or with the registered ones.");
  }
  TupleDesc desc = td->tg_relation->rd_att;
  const int status_col = guarded.status_col;
  const int key_col = guarded.key_col;
  const int tenant_col = guarded.tenant_col;
  const Oid owner = guarded.owner;
  if (TupleDescAttr(desc, status_col - 1)->attgenerated != '\0') {
    throw Error(ErrorCode::ArgumentInvalid,
                std::string("idem.enforce_transitions: status column \"") + reg.status_column +
                    "\" is generated, and a BEFORE trigger sees it before it is computed",
                "Guard the column the generated one is computed from.");
  }
  transitions::require_log_trigger(td, guarded);
  // Where roles are bound to tenants, a guard that does not fire when the tenant or key column
  // changes would let a bound role re-label a row unseen, then move it as its own.
  if (is_update && (!transitions::fires_on(trigger, tenant_col) || (key_col && !transitions::fires_on(trigger, key_col)))) {
    if (bindings::may_be_bound(bindings::Table::Tenant)) {
      throw Error(ErrorCode::ArgumentInvalid,
                  std::string("idem.enforce_transitions on ") + reg.table_name +
                      ": with tenant bindings, the trigger must also fire on updates of the tenant and key columns",
                  "CREATE OR REPLACE TRIGGER ... BEFORE INSERT OR UPDATE ON the table (or UPDATE OF the status, tenant and key columns).");
    }
  }
  HeapTuple row = is_update ? td->tg_newtuple : td->tg_trigtuple;
  const char* to = transitions::column_value(row, desc, status_col);
  const char* from = is_update ? transitions::column_value(td->tg_trigtuple, desc, status_col) : nullptr;

  // The row's tenant, old and new: a session bound to tenants writes only their rows, even when
  // the status stays (a row re-labelled in steps is still another tenant's).
  const char* tenant = transitions::column_value(row, desc, tenant_col);
  transitions::require_row_tenants(td, guarded, tenant);
  if (is_update && from != nullptr && to != nullptr && std::strcmp(from, to) == 0) return PointerGetDatum(row);

  transitions::LogEntry entry{machine, RelationGetRelid(td->tg_relation), reg.table_name, tenant, key_col ? transitions::column_value(row, desc, key_col) : nullptr,
                 from, to, nullptr, -1, "applied"};
  const transitions::EdgeCheck edge = transitions::check_edge(machine, from, to);
  std::string refusal = edge.refusal;
  if (refusal.empty() && edge.guard_oid != InvalidOid) {
    entry.guard_name = edge.guard_name.c_str();
    const bool holds = transitions::guard_holds(edge, row, desc);
    if (holds) transitions::checked_rows::remember(RelationGetRelid(td->tg_relation), entry.row_key, to, true);
    entry.guard_result = holds ? 1 : 0;
    if (!holds) refusal = machines::guard_refusal(machine, from, to, edge.guard_name);
  }
  if (!refusal.empty() && !skip) {
    throw Error(ErrorCode::InvalidTransition, refusal, "The row keeps its state; read it again before changing it.");
  }
  if (refusal.empty()) return PointerGetDatum(row);  // the AFTER trigger logs it once it is written
  entry.outcome = "skipped";
  pg::call(transitions::append_log, entry, owner);
  return PointerGetDatum(nullptr);
}

// Statement trigger on the machine tables: every backend drops its cached machines.
Datum machines_changed(FunctionCallInfo fcinfo) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw Error(ErrorCode::ArgumentInvalid, "idem._machines_changed() must be called as a trigger");
  const Oid relid = RelationGetRelid(reinterpret_cast<TriggerData*>(fcinfo->context)->tg_relation);
  pg::call(CacheInvalidateRelcacheByRelid, relid);
  return PointerGetDatum(nullptr);
}

}  // namespace
}  // namespace idem

IDEM_SQL_FUNCTION(idem_enforce_transitions, idem::enforce_transitions)

IDEM_SQL_FUNCTION(idem_machines_changed, idem::machines_changed)
