#include "extension/transitions/edge.hpp"

#include "core/error.hpp"
#include "extension/boundary.hpp"
#include "extension/machine_cache.hpp"

namespace idem::transitions {
namespace {

// The row as jsonb, copied out of SPI's memory. Plain C: called through pg::call.
Datum row_as_jsonb_unsafe(HeapTuple tuple, TupleDesc desc) {
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

}  // namespace

bool guard_holds(const EdgeCheck& edge, HeapTuple row, TupleDesc desc) {
  const Datum row_jsonb = pg::call(row_as_jsonb_unsafe, row, desc);
  return pg::call(machines::guard_holds, edge.guard_oid, row_jsonb);
}

EdgeCheck check_edge(const char* machine, const char* from, const char* to) {
  using machines::Verdict;
  EdgeCheck edge{std::string(), InvalidOid, std::string()};
  const machines::MachineTable& table = machines::cached_table();
  if (!table.has_machine(machine)) throw Error(ErrorCode::MachineUnknown, std::string("no state machine named '") + machine + "'");
  if (to == nullptr) {
    edge.refusal = std::string(machine) + " state must not be NULL";
  } else if (from == nullptr) {
    if (!table.has_state(machine, to)) edge.refusal = std::string("machine ") + machine + " has no state '" + to + "'";
  } else {
    const machines::Check c = table.check(machine, from, to);
    if (c.verdict == Verdict::UnknownState || c.verdict == Verdict::NoTransition || c.verdict == Verdict::Terminal) {
      edge.refusal = c.message;
    } else if (c.verdict == Verdict::NeedsGuard) {
      edge.guard_oid = c.transition->guard_oid;
      edge.guard_name = c.transition->guard_name;
    }
  }
  return edge;
}

}  // namespace idem::transitions
