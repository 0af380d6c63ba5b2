// idem.enforce_transitions([machine, column [, key_column [, on_refusal]]]): a BEFORE INSERT OR
// UPDATE row trigger that makes a user table's status column follow a state machine and logs
// every transition in idem.transition_log. It acts only on a table an operator registered with
// idem.register_machine_table (the log is written as its owner, so an unregistered table would
// let any role write trail rows for any tenant), takes the machine and columns from the
// registration (arguments, when given, must agree with it), and refuses a row of a tenant the
// session is not bound to. on_refusal 'raise' (default) fails the statement with
// ERR_INVALID_TRANSITION (and the refusal rolls back with it: only the server log keeps it);
// 'skip' leaves the row unchanged, lets the statement go on, and logs the refusal, which then
// commits with the transaction.
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "extension/binding_cache.hpp"
#include "extension/boundary.hpp"
#include "extension/hot_path/tenant_check.hpp"
#include "extension/machine_cache.hpp"
#include "extension/machine_tables.hpp"
#include "extension/pg/as_user.hpp"

namespace idem {
namespace {

using machines::Verdict;

SPIPlanPtr log_plan = nullptr;

// PostgreSQL only: the row as jsonb, copied out of SPI's memory.
Datum row_as_jsonb(HeapTuple tuple, TupleDesc desc) {
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  Oid type = desc->tdtypeid;
  Datum value = heap_copy_tuple_as_datum(tuple, desc);
  if (SPI_execute_with_args("SELECT pg_catalog.to_jsonb($1)", 1, &type, &value, nullptr, true, 1) != SPI_OK_SELECT) {
    elog(ERROR, "pg_idempotency: could not convert the row to jsonb");
  }
  bool isnull = false;
  Datum jsonb = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  jsonb = SPI_datumTransfer(jsonb, false, -1);
  SPI_finish();
  return jsonb;
}

struct LogEntry {
  const char* machine;
  Oid relid;
  const char* table_name;  // schema-qualified, quoted where needed
  const char* tenant;
  const char* row_key;  // may be null
  const char* from;     // null for an INSERT
  const char* to;
  const char* guard_name;  // null when no guard was asked
  int guard_result;        // -1 not asked
  const char* outcome;     // applied | skipped
};

// PostgreSQL only: one row of idem.transition_log, through a plan kept for the backend's life,
// written as the log's owner (the way ri_triggers.c checks as the table's owner): the role that
// changed the row (as whom guards ran) cannot write the log itself, so it cannot forge rows.
// On an error the transaction's abort restores the user.
void insert_log_row(const LogEntry& e) {
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (log_plan == nullptr) {
    Oid types[10] = {TEXTOID, OIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, BOOLOID, TEXTOID, TEXTOID, TEXTOID};
    SPIPlanPtr plan = SPI_prepare(
        "INSERT INTO idem.transition_log (machine, relid, table_name, row_key, from_state, to_state, guard_name, "
        "guard_result, outcome, tenant_id) VALUES ($1, $2, $9, $3, $4, $5, $6, $7, $8, $10)",
        10, types);
    if (plan == nullptr || SPI_keepplan(plan) != 0) elog(ERROR, "pg_idempotency: could not prepare the transition log insert");
    log_plan = plan;
  }
  auto text = [](const char* s) { return s ? CStringGetTextDatum(s) : Datum(0); };
  Datum values[10] = {text(e.machine), ObjectIdGetDatum(e.relid), text(e.row_key), text(e.from), text(e.to),
                      text(e.guard_name), BoolGetDatum(e.guard_result == 1), text(e.outcome), text(e.table_name),
                      text(e.tenant)};
  char nulls[11] = "          ";
  if (!e.row_key) nulls[2] = 'n';
  if (!e.from) nulls[3] = 'n';
  if (!e.guard_name) nulls[5] = 'n';
  if (e.guard_result < 0) nulls[6] = 'n';
  if (SPI_execute_plan(log_plan, values, nulls, false, 0) != SPI_OK_INSERT) {
    elog(ERROR, "pg_idempotency: could not log the transition");
  }
  SPI_finish();
}

void append_log(const LogEntry& e, Oid owner) {
  pg::as_user(owner, [&] { insert_log_row(e); });
}

// PostgreSQL only: the session may act for the row's tenant, and on an UPDATE for the old row's
// too (a row re-labelled to one's own tenant is still another's). Checked as the log's owner:
// the writing role needs no privilege on our functions (the rule reads session_user).
void require_row_tenants(TriggerData* td, TupleDesc desc, const char* tenant, int tenant_col, bool is_update, Oid owner) {
  pg::as_user(owner, [&] {
    hot::require_tenant(CStringGetTextDatum(tenant));
    if (is_update) {
      const char* old_tenant = SPI_getvalue(td->tg_trigtuple, desc, tenant_col);
      if (old_tenant != nullptr) hot::require_tenant(CStringGetTextDatum(old_tenant));
    }
  });
}

// Whether an UPDATE of the column fires the trigger (no column list: every update does).
bool fires_on(const Trigger* trigger, int attnum) {
  if (trigger->tgnattr == 0) return true;
  for (int i = 0; i < trigger->tgnattr; ++i) {
    if (trigger->tgattr[i] == attnum) return true;
  }
  return false;
}

const char* column_value(HeapTuple tuple, TupleDesc desc, int attnum) {
  return pg::guarded([&] { return SPI_getvalue(tuple, desc, attnum); });
}

int column_number(TupleDesc desc, const char* name, const char* what) {
  const int attnum = SPI_fnumber(desc, name);  // only looks the name up: cannot elog
  if (attnum <= 0) {
    throw Error(ErrorCode::ArgumentInvalid, std::string("idem.enforce_transitions: the table has no ") + what + " column \"" + name + "\"",
                "The table no longer has the column it was registered with: an operator registers it again with "
                "idem.register_machine_table(table, machine, status column, key column, tenant column).");
  }
  return attnum;
}

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
  const Oid owner = machines::log_owner();
  machines::TableRegistration reg;
  const char* status_arg = trigger->tgnargs >= 2 ? trigger->tgargs[1] : nullptr;
  pg::guarded([&] { machines::read_registration(td->tg_relation, status_arg, owner, &reg); });
  if (reg.schema_outdated) {
    throw Error(ErrorCode::MachineTableUnregistered,
                std::string("table ") + reg.table_name + " cannot be guarded: the idem schema is older than this library, which guards only registered tables",
                "Run ALTER EXTENSION pg_idempotency UPDATE (it registers the guarded tables that have a tenant_id column).");
  }
  if (!reg.found) {
    throw Error(ErrorCode::MachineTableUnregistered,
                std::string("table ") + reg.table_name + " is not registered for idem.enforce_transitions",
                std::string("An operator registers it: SELECT idem.register_machine_table('") + reg.table_name +
                    "', '<machine>', '<status column>', '<key column>', '<tenant column>');");
  }
  if (reg.ambiguous) {
    throw Error(ErrorCode::ArgumentInvalid,
                std::string("idem.enforce_transitions on ") + reg.table_name + ": the table guards several status columns",
                "Name the machine and status column in the trigger: EXECUTE FUNCTION idem.enforce_transitions('<machine>', '<status column>').");
  }
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
  const int status_col = column_number(desc, reg.status_column, "status");
  if (TupleDescAttr(desc, status_col - 1)->attgenerated != '\0') {
    throw Error(ErrorCode::ArgumentInvalid,
                std::string("idem.enforce_transitions: status column \"") + reg.status_column +
                    "\" is generated, and a BEFORE trigger sees it before it is computed",
                "Guard the column the generated one is computed from.");
  }
  const int key_col = reg.key_column ? column_number(desc, reg.key_column, "key") : 0;
  const int tenant_col = column_number(desc, reg.tenant_column, "tenant");
  // Where roles are bound to tenants, a guard that does not fire when the tenant or key column
  // changes would let a bound role re-label a row unseen, then move it as its own.
  if (is_update && (!fires_on(trigger, tenant_col) || (key_col && !fires_on(trigger, key_col)))) {
    if (pg::guarded([] { return bindings::any(bindings::Table::Tenant); })) {
      throw Error(ErrorCode::ArgumentInvalid,
                  std::string("idem.enforce_transitions on ") + reg.table_name +
                      ": with tenant bindings, the trigger must also fire on updates of the tenant and key columns",
                  "CREATE OR REPLACE TRIGGER ... BEFORE INSERT OR UPDATE ON the table (or UPDATE OF the status, tenant and key columns).");
    }
  }
  HeapTuple row = is_update ? td->tg_newtuple : td->tg_trigtuple;
  const char* to = column_value(row, desc, status_col);
  const char* from = is_update ? column_value(td->tg_trigtuple, desc, status_col) : nullptr;

  // The row's tenant, old and new: a session bound to tenants writes only their rows, even when
  // the status stays (a row re-labelled in steps is still another tenant's).
  const char* tenant = column_value(row, desc, tenant_col);
  if (tenant == nullptr) {
    throw Error(ErrorCode::ArgumentInvalid, std::string("idem.enforce_transitions on ") + reg.table_name + ": tenant column " +
                                                reg.tenant_column + " is NULL",
                "Every row of a guarded table names its tenant.");
  }
  pg::guarded([&] { require_row_tenants(td, desc, tenant, tenant_col, is_update, owner); });
  if (is_update && from != nullptr && to != nullptr && std::strcmp(from, to) == 0) return PointerGetDatum(row);

  LogEntry entry{machine, RelationGetRelid(td->tg_relation), reg.table_name, tenant, key_col ? column_value(row, desc, key_col) : nullptr,
                 from, to, nullptr, -1, "applied"};
  std::string refusal;
  std::string guard_name;
  const machines::MachineTable& table = machines::cached_table();
  if (!table.has_machine(machine)) throw Error(ErrorCode::MachineUnknown, std::string("no state machine named '") + machine + "'");
  if (to == nullptr) {
    refusal = std::string(machine) + " state must not be NULL";
  } else if (from == nullptr) {
    // A new row (or a status that was NULL) may start in any state of the machine.
    if (!table.has_state(machine, to)) refusal = std::string("machine ") + machine + " has no state '" + to + "'";
  } else {
    const machines::Check c = table.check(machine, from, to);
    if (c.verdict == Verdict::UnknownState || c.verdict == Verdict::NoTransition || c.verdict == Verdict::Terminal) {
      refusal = c.message;
    } else if (c.verdict == Verdict::NeedsGuard) {
      // Copied first: the guard may run SQL that drops the cached table c points into.
      const Oid guard = c.transition->guard_oid;
      guard_name = c.transition->guard_name;
      entry.guard_name = guard_name.c_str();
      const bool holds = pg::guarded([&] { return machines::guard_holds(guard, row_as_jsonb(row, desc)); });
      entry.guard_result = holds ? 1 : 0;
      if (!holds) refusal = machines::guard_refusal(machine, from, to, guard_name);
    }
  }
  if (!refusal.empty() && !skip) {
    throw Error(ErrorCode::InvalidTransition, refusal, "The row keeps its state; read it again before changing it.");
  }
  if (!refusal.empty()) entry.outcome = "skipped";
  pg::guarded([&] { append_log(entry, owner); });
  return refusal.empty() ? PointerGetDatum(row) : PointerGetDatum(nullptr);
}

// Statement trigger on the machine tables: every backend drops its cached machines.
Datum machines_changed(FunctionCallInfo fcinfo) {
  if (!CALLED_AS_TRIGGER(fcinfo)) throw Error(ErrorCode::ArgumentInvalid, "idem._machines_changed() must be called as a trigger");
  const Oid relid = RelationGetRelid(reinterpret_cast<TriggerData*>(fcinfo->context)->tg_relation);
  pg::guarded([&] { CacheInvalidateRelcacheByRelid(relid); });
  return PointerGetDatum(nullptr);
}

}  // namespace
}  // namespace idem

extern "C" {
PG_FUNCTION_INFO_V1(idem_enforce_transitions);
Datum idem_enforce_transitions(PG_FUNCTION_ARGS) { return idem::Invoke(idem::enforce_transitions, fcinfo); }

PG_FUNCTION_INFO_V1(idem_machines_changed);
Datum idem_machines_changed(PG_FUNCTION_ARGS) { return idem::Invoke(idem::machines_changed, fcinfo); }
}
