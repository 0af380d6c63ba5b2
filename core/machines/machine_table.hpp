// State machines as data: the states and transitions of every machine, loaded once per backend
// from idem.machine_states / idem.machine_transitions and asked on every status write. Pure: the
// extension loads it and evaluates guards; this only answers from the table.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace idem::machines {

struct Transition {
  std::uint32_t guard_oid = 0;  // a function (row jsonb) -> boolean, 0 when unguarded
  std::string guard_name;       // what a refusal quotes, e.g. "stock available"
};

enum class Verdict {
  Allowed,         // the transition exists (and has no guard)
  NeedsGuard,      // it exists, if its guard holds for the row
  NoTransition,    // both states exist, the machine has no such step
  Terminal,        // the from-state has no way out at all
  UnknownMachine,
  UnknownState,
};

struct Check {
  Verdict verdict;
  const Transition* transition = nullptr;  // Allowed / NeedsGuard
  std::string message;                     // a refusal in words, naming machine and states
};

// The refusal when a transition's guard does not hold for the row.
std::string guard_refusal(std::string_view machine, std::string_view from, std::string_view to,
                          std::string_view guard_name);

class MachineTable {
 public:
  void add_state(const std::string& machine, const std::string& state);
  void add_transition(const std::string& machine, const std::string& from, const std::string& to,
                      Transition transition);

  bool has_machine(std::string_view machine) const;
  bool has_state(std::string_view machine, std::string_view state) const;
  Check check(std::string_view machine, std::string_view from, std::string_view to) const;

 private:
  struct Machine {
    std::set<std::string, std::less<>> states;
    std::map<std::pair<std::string, std::string>, Transition, std::less<>> transitions;
    std::set<std::string, std::less<>> with_exits;  // states that have an outgoing transition
  };
  std::map<std::string, Machine, std::less<>> machines_;
};

}  // namespace idem::machines
