#include "extension/transitions/guarded_table.hpp"

#include <cstring>
#include <string>

#include "core/error.hpp"
#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/hot_path/tenant_check.hpp"
#include "extension/machine_cache.hpp"
#include "extension/pg/as_user.hpp"

namespace idem::transitions {
namespace {

int column_number(TupleDesc desc, const char* name, const char* what) {
  const int attnum = SPI_fnumber(desc, name);  // only looks the name up: cannot elog
  if (attnum <= 0) {
    throw Error(ErrorCode::ArgumentInvalid, std::string("idem.enforce_transitions: the table has no ") + what + " column \"" + name + "\"",
                "The table no longer has the column it was registered with: an operator registers it again with "
                "idem.register_machine_table(table, machine, status column, key column, tenant column).");
  }
  return attnum;
}

// Plain syscache reads; the function is ours when it is idem.<name>. Plain C: called through pg::call.
bool is_idem_function_unsafe(Oid function, const char* name) {
  const char* fname = get_func_name(function);
  return fname != nullptr && strcmp(fname, name) == 0 && get_func_namespace(function) == get_namespace_oid("idem", true);
}

bool is_idem_function(Oid function, const char* name) { return pg::call(is_idem_function_unsafe, function, name); }

// Whether the trigger fires in this session: ENABLE REPLICA / ALWAYS against
// session_replication_role, as PostgreSQL decides it.
bool fires_in_session(const Trigger& t) {
  if (SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA) {
    return t.tgenabled == TRIGGER_FIRES_ON_REPLICA || t.tgenabled == TRIGGER_FIRES_ALWAYS;
  }
  return t.tgenabled == TRIGGER_FIRES_ON_ORIGIN || t.tgenabled == TRIGGER_FIRES_ALWAYS;
}

std::string register_hint(const GuardedTable& table) {
  return std::string("An operator registers the table again (it creates the log trigger): SELECT idem.register_machine_table('") +
         table.reg.table_name + "', '" + table.reg.machine + "', '" + table.reg.status_column + "', " +
         (table.reg.key_column ? std::string("'") + table.reg.key_column + "'" : std::string("NULL")) + ", '" +
         table.reg.tenant_column + "');";
}

}  // namespace

void throw_conditional_guard(const char* table) {
  throw Error(ErrorCode::ArgumentInvalid,
              std::string("idem.enforce_transitions on ") + table + ": a guard trigger must not have a WHEN clause (a row it skips would be written unchecked)",
              "CREATE OR REPLACE TRIGGER ... BEFORE INSERT OR UPDATE ON the table FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();");
}

bool fires_on(const Trigger* trigger, int attnum) {
  if (trigger->tgnattr == 0) return true;
  for (int i = 0; i < trigger->tgnattr; ++i) {
    if (trigger->tgattr[i] == attnum) return true;
  }
  return false;
}

const char* column_value(HeapTuple tuple, TupleDesc desc, int attnum) {
  return pg::call(SPI_getvalue, tuple, desc, attnum);
}

GuardedTable resolve(TriggerData* td, const char* status_arg) {
  GuardedTable table{};
  table.owner = machines::log_owner();
  pg::call(machines::read_registration, td->tg_relation, status_arg, table.owner, &table.reg);
  const machines::TableRegistration& reg = table.reg;
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
  TupleDesc desc = td->tg_relation->rd_att;
  table.status_col = column_number(desc, reg.status_column, "status");
  table.key_col = reg.key_column ? column_number(desc, reg.key_column, "key") : 0;
  table.tenant_col = column_number(desc, reg.tenant_column, "tenant");
  return table;
}

void require_log_trigger(const TriggerData* td, const GuardedTable& table) {
  const TriggerDesc* triggers = td->tg_relation->trigdesc;
  for (int i = 0; triggers != nullptr && i < triggers->numtriggers; ++i) {
    const Trigger& t = triggers->triggers[i];
    if (TRIGGER_FOR_ROW(t.tgtype) && TRIGGER_FOR_AFTER(t.tgtype) && TRIGGER_FOR_INSERT(t.tgtype) && TRIGGER_FOR_UPDATE(t.tgtype) &&
        fires_in_session(t) && t.tgnargs == 1 && std::strcmp(t.tgargs[0], table.reg.status_column) == 0 && t.tgnattr == 0 &&
        t.tgqual == nullptr && is_idem_function(t.tgfoid, "_log_transitions")) {
      return;
    }
  }
  throw Error(ErrorCode::ArgumentInvalid,
              std::string("idem.enforce_transitions on ") + table.reg.table_name + ": the table's transition log trigger is missing, disabled, or does not fire on every INSERT and UPDATE, so its transitions would go unlogged",
              register_hint(table));
}

// Checked as the log's owner: the writing role needs no privilege on our functions (the rule
// reads session_user).
void require_row_tenants(const TriggerData* td, const GuardedTable& table, const char* tenant) {
  if (tenant == nullptr) {
    throw Error(ErrorCode::ArgumentInvalid,
                std::string("idem.enforce_transitions on ") + table.reg.table_name + ": tenant column " + table.reg.tenant_column + " is NULL",
                "Every row of a guarded table names its tenant.");
  }
  pg::as_user(table.owner, [&] {
    hot::require_tenant(datum::text_datum(tenant));
    if (TRIGGER_FIRED_BY_UPDATE(td->tg_event)) {
      const char* old_tenant = pg::call(SPI_getvalue, td->tg_trigtuple, td->tg_relation->rd_att, table.tenant_col);
      if (old_tenant != nullptr) hot::require_tenant(datum::text_datum(old_tenant));
    }
  });
}

bool guard_fired(const TriggerData* td, const char* status_column, int status_col) {
  const bool is_insert = TRIGGER_FIRED_BY_INSERT(td->tg_event);
  const TriggerDesc* triggers = td->tg_relation->trigdesc;
  for (int i = 0; triggers != nullptr && i < triggers->numtriggers; ++i) {
    const Trigger& t = triggers->triggers[i];
    const bool on_event = is_insert ? TRIGGER_FOR_INSERT(t.tgtype) : (TRIGGER_FOR_UPDATE(t.tgtype) && fires_on(&t, status_col));
    if (TRIGGER_FOR_ROW(t.tgtype) && TRIGGER_FOR_BEFORE(t.tgtype) && on_event && fires_in_session(t) &&
        (t.tgnargs < 2 || std::strcmp(t.tgargs[1], status_column) == 0) && is_idem_function(t.tgfoid, "enforce_transitions")) {
      if (t.tgqual != nullptr) throw_conditional_guard(RelationGetRelationName(td->tg_relation));
      return true;
    }
  }
  return false;
}

}  // namespace idem::transitions
