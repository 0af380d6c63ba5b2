// See machine_cache.hpp. Loading runs SPI in a guarded frame that holds only plain data, then
// builds the C++ table from it.
#include "extension/machine_cache.hpp"

#include <memory>
#include <string>

#include "extension/pg/pg_error.hpp"

namespace idem::machines {
namespace {

std::unique_ptr<MachineTable> table;
Oid states_relid = InvalidOid;
Oid transitions_relid = InvalidOid;

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

// PostgreSQL only: runs the query and copies its rows out of SPI's memory.
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

std::unique_ptr<MachineTable> load() {
  RawRows states{};
  RawRows transitions{};
  pg::guarded([&] {
    const Oid ns = get_namespace_oid("idem", false);
    states_relid = get_relname_relid("machine_states", ns);
    transitions_relid = get_relname_relid("machine_transitions", ns);
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
    states = fetch("SELECT machine, state FROM idem.machine_states", 2, false);
    transitions = fetch("SELECT machine, from_state, to_state, guard::oid, guard_name FROM idem.machine_transitions", 3, true);
    SPI_finish();
  });
  auto t = std::make_unique<MachineTable>();
  for (uint64 i = 0; i < states.count; ++i) t->add_state(states.rows[i].text[0], states.rows[i].text[1]);
  for (uint64 i = 0; i < transitions.count; ++i) {
    const RawRow& r = transitions.rows[i];
    t->add_transition(r.text[0], r.text[1], r.text[2], {r.guard, r.guard_name ? r.guard_name : ""});
  }
  return t;
}

}  // namespace

const MachineTable& cached_table() {
  if (!table) table = load();
  return *table;
}

bool guard_holds(Oid guard, Datum row) {
  FmgrInfo flinfo;
  fmgr_info(guard, &flinfo);
  LOCAL_FCINFO(call, 1);
  InitFunctionCallInfoData(*call, &flinfo, 1, InvalidOid, nullptr, nullptr);
  call->args[0].value = row;
  call->args[0].isnull = false;
  const Datum result = FunctionCallInvoke(call);
  return !call->isnull && DatumGetBool(result);
}

void register_invalidation() { CacheRegisterRelcacheCallback(invalidate, 0); }

}  // namespace idem::machines
