// SQL surface of the state machines: can_transition, check_transition, and the trigger that makes
// a user table's status column forward-only (enforce_transitions) and logs every transition.
#include <string>

#include "core/error.hpp"
#include "extension/boundary.hpp"
#include "extension/datum_convert.hpp"
#include "extension/machine_cache.hpp"

namespace idem {
namespace {

using machines::Check;
using machines::Verdict;

// Unknown machines and states are mistakes in the caller's code, not refused transitions.
void require_known(const Check& c) {
  if (c.verdict == Verdict::UnknownMachine) throw Error(ErrorCode::MachineUnknown, c.message);
  if (c.verdict == Verdict::UnknownState) throw Error(ErrorCode::StateUnknown, c.message);
}

struct Decision {
  bool allowed;
  std::string refusal;     // empty when allowed
  std::string guard_name;  // the guard asked, if any
  int guard_result;        // -1 not asked, 0 false, 1 true
};

// row: jsonb Datum, or 0 when there is none (a guarded transition is then not evaluated).
Decision decide(std::string_view machine, std::string_view from, std::string_view to, Datum row) {
  const Check c = machines::cached_table().check(machine, from, to);
  require_known(c);
  if (c.verdict == Verdict::Allowed) return {true, {}, {}, -1};
  if (c.verdict != Verdict::NeedsGuard) return {false, c.message, {}, -1};
  // Copied before the guard runs: it may run SQL that drops the cached table c points into.
  const std::string name = c.transition->guard_name;
  const Oid guard = c.transition->guard_oid;
  if (row == 0) return {true, {}, name, -1};
  const bool holds = pg::call(machines::guard_holds, guard, row);
  if (holds) return {true, {}, name, 1};
  return {false, machines::guard_refusal(machine, from, to, name), name, 0};
}

// Detoasts (may elog): called for every argument before any C++ object lives in the caller.
std::string_view required_text(FunctionCallInfo fcinfo, int n, const char* what) {
  const auto v = datum::text_arg(fcinfo, n);
  if (!v) throw Error(ErrorCode::ArgumentInvalid, std::string(what) + " must not be NULL");
  return *v;
}

// The row a guard is asked about: a JSON object, or none.
Datum row_arg(FunctionCallInfo fcinfo, int n) {
  if (PG_ARGISNULL(n)) return 0;
  Jsonb* row = pg::guarded([&] { return PG_GETARG_JSONB_P(n); });
  if (!JB_ROOT_IS_OBJECT(row) || JB_ROOT_IS_SCALAR(row)) {
    throw Error(ErrorCode::ArgumentInvalid, "row_data must be a JSON object (the row, as to_jsonb gives it)");
  }
  return PointerGetDatum(row);
}

Datum can_transition(FunctionCallInfo fcinfo) {
  const Datum row = row_arg(fcinfo, 3);
  const std::string_view machine = required_text(fcinfo, 0, "machine");
  const std::string_view from = required_text(fcinfo, 1, "from_state");
  const std::string_view to = required_text(fcinfo, 2, "to_state");
  return BoolGetDatum(decide(machine, from, to, row).allowed);
}

Datum check_transition(FunctionCallInfo fcinfo) {
  const Datum row = row_arg(fcinfo, 3);
  const std::string_view machine = required_text(fcinfo, 0, "machine");
  const std::string_view from = required_text(fcinfo, 1, "from_state");
  const std::string_view to = required_text(fcinfo, 2, "to_state");
  const Decision d = decide(machine, from, to, row);
  if (!d.allowed) {
    throw Error(ErrorCode::InvalidTransition, d.refusal, "Read the record again: its state forbids this operation.");
  }
  PG_RETURN_VOID();
}

}  // namespace
}  // namespace idem

IDEM_SQL_FUNCTION(idem_can_transition, idem::can_transition)

IDEM_SQL_FUNCTION(idem_check_transition, idem::check_transition)
