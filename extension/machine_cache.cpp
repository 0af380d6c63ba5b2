// See machine_cache.hpp. Loading runs SPI in a guarded frame that holds only plain data, then
// builds the C++ table from it.
#include "extension/machine_cache.hpp"

#include <memory>
#include <string>

#include "core/error.hpp"
#include "extension/pg/pg_error.hpp"

namespace idem::machines {
namespace {

std::unique_ptr<MachineTable> table;
Oid states_relid = InvalidOid;
Oid transitions_relid = InvalidOid;
Oid owner_of_log = InvalidOid;

void invalidate(Datum, Oid relid) {
  if (relid == InvalidOid || relid == states_relid || relid == transitions_relid) table.reset();
}

struct RawRow {
  char* text[3];  // machine, state / machine, from, to
  Oid guard;
  char* guard_name;
};
struct RawRows {
  RawRow* rows;
  uint64 count;
};

char* copy_out(HeapTuple tuple, TupleDesc desc, int column) {
  char* value = SPI_getvalue(tuple, desc, column);
  if (value == nullptr) return nullptr;
  const Size n = strlen(value) + 1;
  char* out = static_cast<char*>(SPI_palloc(n));  // outlives SPI_finish
  memcpy(out, value, n);
  return out;
}

// Plain C: runs the query and copies its rows out of SPI's memory.
RawRows fetch(const char* sql, int text_columns, bool with_guard) {
  if (SPI_execute(sql, true, 0) != SPI_OK_SELECT) elog(ERROR, "pg_idempotency: could not read %s", sql);
  RawRows out{static_cast<RawRow*>(SPI_palloc(sizeof(RawRow) * (SPI_processed + 1))), SPI_processed};
  for (uint64 i = 0; i < SPI_processed; ++i) {
    HeapTuple tuple = SPI_tuptable->vals[i];
    TupleDesc desc = SPI_tuptable->tupdesc;
    RawRow& r = out.rows[i];
    for (int c = 0; c < 3; ++c) r.text[c] = c < text_columns ? copy_out(tuple, desc, c + 1) : nullptr;
    r.guard = InvalidOid;
    r.guard_name = nullptr;
    if (with_guard) {
      bool isnull = false;
      const Datum guard = SPI_getbinval(tuple, desc, text_columns + 1, &isnull);
      r.guard = isnull ? InvalidOid : DatumGetObjectId(guard);
      r.guard_name = copy_out(tuple, desc, text_columns + 2);
    }
  }
  return out;
}

// Plain C, called through pg::call. The owner's identity is restored by the transaction's abort on error.
void read_tables_unsafe(RawRows* states, RawRows* transitions) {
  const Oid ns = get_namespace_oid("idem", false);
  states_relid = get_relname_relid("machine_states", ns);
  transitions_relid = get_relname_relid("machine_transitions", ns);
  owner_of_log = InvalidOid;
  Oid saved_user;
  int saved_context;
  GetUserIdAndSecContext(&saved_user, &saved_context);
  HeapTuple rel = SearchSysCache1(RELOID, ObjectIdGetDatum(transitions_relid));
  if (!HeapTupleIsValid(rel)) elog(ERROR, "pg_idempotency: idem.machine_transitions is missing");
  const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(rel))->relowner;
  ReleaseSysCache(rel);
  SetUserIdAndSecContext(owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  PushActiveSnapshot(GetLatestSnapshot());
  *states = fetch("SELECT machine, state FROM idem.machine_states", 2, false);
  // A guard is its function's signature (0.4.0; a regprocedure before), resolved on this node,
  // where the function has its own OID. One that does not resolve fails closed: OID 1 names no
  // function, so guard_holds refuses every transition through it.
  *transitions = fetch(
      "SELECT machine, from_state, to_state,"
      " CASE WHEN guard IS NOT NULL THEN coalesce(pg_catalog.to_regprocedure(guard::text)::oid, 1::oid) END, guard_name"
      " FROM idem.machine_transitions",
      3, true);
  PopActiveSnapshot();
  SPI_finish();
  SetUserIdAndSecContext(saved_user, saved_context);
}

std::unique_ptr<MachineTable> load() {
  RawRows states{};
  RawRows transitions{};
  pg::call(read_tables_unsafe, &states, &transitions);
  auto t = std::make_unique<MachineTable>();
  for (uint64 i = 0; i < states.count; ++i) t->add_state(states.rows[i].text[0], states.rows[i].text[1]);
  for (uint64 i = 0; i < transitions.count; ++i) {
    const RawRow& r = transitions.rows[i];
    t->add_transition(r.text[0], r.text[1], r.text[2], {r.guard, r.guard_name ? r.guard_name : ""});
  }
  return t;
}

// Plain C: called through pg::call.
Oid log_owner_unsafe() {
  const Oid relid = get_relname_relid("transition_log", get_namespace_oid("idem", false));
  HeapTuple rel = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
  if (!HeapTupleIsValid(rel)) elog(ERROR, "pg_idempotency: idem.transition_log is missing");
  const Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(rel))->relowner;
  ReleaseSysCache(rel);
  return owner;
}

}  // namespace

const MachineTable& cached_table() {
  // A change committed since this transaction's last lock acquisition is applied now, so even a
  // statement that locks nothing (SELECT idem.can_transition(...)) sees it.
  pg::call(AcceptInvalidationMessages);
  if (!table) table = load();
  return *table;
}

Oid log_owner() {
  if (owner_of_log == InvalidOid) {
    owner_of_log = pg::call(log_owner_unsafe);
  }
  return owner_of_log;
}

// PostgreSQL only, so it raises with ereport; name and SQLSTATE still come from the one table.
[[noreturn]] void refuse_guard(Oid guard, const char* why) {
  const char* code = error_sqlstate(ErrorCode::ArgumentInvalid);
  ereport(ERROR, (errcode(MAKE_SQLSTATE(code[0], code[1], code[2], code[3], code[4])),
                  errmsg("%s: guard %u of a transition %s", error_name(ErrorCode::ArgumentInvalid), guard, why),
                  errhint("A guard is a function (row jsonb) RETURNS boolean, owned by a superuser and executable by the roles that change the rows.")));
}

bool guard_holds(Oid guard, Datum row) {
  HeapTuple proc = SearchSysCache1(PROCOID, ObjectIdGetDatum(guard));
  if (!HeapTupleIsValid(proc)) refuse_guard(guard, "no longer exists (dropped after it was named)");
  const Form_pg_proc p = reinterpret_cast<Form_pg_proc>(GETSTRUCT(proc));
  const bool shape_ok = p->prokind == PROKIND_FUNCTION && p->prorettype == BOOLOID && p->pronargs == 1 &&
                        p->proargtypes.values[0] == JSONBOID && !p->proretset;
  const bool owner_ok = superuser_arg(p->proowner);
  ReleaseSysCache(proc);
  if (!shape_ok) refuse_guard(guard, "is not a plain function (row jsonb) RETURNS boolean");
  if (!owner_ok) refuse_guard(guard, "is not owned by a superuser (it would run with the privileges of whoever changes a row)");
  if (pg_proc_aclcheck(guard, GetUserId(), ACL_EXECUTE) != ACLCHECK_OK) {
    refuse_guard(guard, "may not be executed by the current role");
  }
  FmgrInfo flinfo;
  fmgr_info(guard, &flinfo);
  LOCAL_FCINFO(call, 1);
  InitFunctionCallInfoData(*call, &flinfo, 1, InvalidOid, nullptr, nullptr);
  call->args[0].value = row;
  call->args[0].isnull = false;
  const Datum result = FunctionCallInvoke(call);
  return !call->isnull && DatumGetBool(result);
}

void forget_relation(Oid relid) { invalidate(0, relid); }

}  // namespace idem::machines
