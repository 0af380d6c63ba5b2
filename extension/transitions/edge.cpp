#include "extension/transitions/edge.hpp"

#include "core/error.hpp"
#include "extension/machine_cache.hpp"

namespace idem::transitions {

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
