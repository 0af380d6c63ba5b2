// See machine_table.hpp. Messages name the machine, both states and what failed.
#include "core/machines/machine_table.hpp"

namespace idem::machines {

std::string guard_refusal(std::string_view machine, std::string_view from, std::string_view to,
                          std::string_view guard_name) {
  return std::string(machine) + " cannot move from " + std::string(from) + " to " + std::string(to) + ": guard \"" +
         std::string(guard_name) + "\" does not hold";
}

void MachineTable::add_state(const std::string& machine, const std::string& state) {
  machines_[machine].states.insert(state);
}

void MachineTable::add_transition(const std::string& machine, const std::string& from, const std::string& to,
                                  Transition transition) {
  Machine& m = machines_[machine];
  m.transitions[{from, to}] = std::move(transition);
  m.with_exits.insert(from);
}

bool MachineTable::has_machine(std::string_view machine) const { return machines_.find(machine) != machines_.end(); }

bool MachineTable::has_state(std::string_view machine, std::string_view state) const {
  const auto m = machines_.find(machine);
  return m != machines_.end() && m->second.states.count(state) > 0;
}

Check MachineTable::check(std::string_view machine, std::string_view from, std::string_view to) const {
  const std::string name(machine);
  const auto m = machines_.find(machine);
  if (m == machines_.end()) return {Verdict::UnknownMachine, nullptr, "no state machine named '" + name + "'"};
  for (std::string_view state : {from, to}) {
    if (m->second.states.count(state) == 0) {
      return {Verdict::UnknownState, nullptr, "machine " + name + " has no state '" + std::string(state) + "'"};
    }
  }
  const std::string move = name + " cannot move from " + std::string(from) + " to " + std::string(to);
  const auto t = m->second.transitions.find(std::make_pair(std::string(from), std::string(to)));
  if (t != m->second.transitions.end()) {
    return {t->second.guard_oid != 0 ? Verdict::NeedsGuard : Verdict::Allowed, &t->second, {}};
  }
  if (m->second.with_exits.count(from) == 0) return {Verdict::Terminal, nullptr, move + ": " + std::string(from) + " is terminal"};
  return {Verdict::NoTransition, nullptr, move + ": no such transition"};
}

}  // namespace idem::machines
