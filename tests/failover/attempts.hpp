// One request of a key, as a service would make it: a single-transaction client.run, or the
// multi-step client.begin → checkpoints → lease.complete of a handler that calls a processor.
// What the caller learnt is an Outcome; nothing here decides what a failover did (verify does).
#pragma once

#include <chrono>
#include <string>

#include "idem/client.hpp"
#include "tests/failover/key_spec.hpp"

namespace idem::failover {

struct Outcome {
  enum class Type {
    acknowledged,  // a 2xx answer: the handler's own, or a replay of it
    busy,          // 409 in progress: another request holds the key
    unresolved,    // an error the caller cannot read as "done" or "not done" for the key
    fenced,        // a lease holder got LeaseLost: it recorded nothing, another attempt owns the key
    unexpected,    // an answer the workload never provokes (422, 400, ...): a defect
  };
  Type type = Type::unexpected;
  Answer answer;          // acknowledged
  bool replayed = false;  // acknowledged: it was a replay
  bool outcome_unknown = false;  // unresolved: a COMMIT (or autocommit step) of unknown fate
  // The execution id the handler produced in this request, when its commit's fate is unknown:
  // verify tells from the answer on the new primary whether that commit survived the failover.
  std::string in_doubt_execution;
  // Lease steps a holder sent again after they failed (the client itself resends an in-doubt
  // checkpoint on a fresh connection, so what the holder sees is often the reconnect's error):
  // the holder did not know whether its step was recorded and carried on across the failover.
  int repeated_steps = 0;
  std::string why;        // not acknowledged: what happened
};
const char* type_name(Outcome::Type type);

struct Pacing {
  // The simulated processor call between a lease's steps: the window a failover cuts into.
  std::chrono::milliseconds min_step{20}, max_step{120};
  // A lease holder outlives a failover: it retries a step that failed this long before it gives
  // up (then the key is unresolved and a later request with the key settles it).
  std::chrono::seconds step_deadline{30};
  // Some holders stall after the failure (a paused process, a hung processor call) for longer
  // than their lease before they retry, so a duplicate can take the key over: they must be fenced.
  double stall_share = 0.5;
  std::chrono::milliseconds stall{3000};
};

Outcome perform(Client& client, const KeySpec& spec, const Pacing& pacing);

}  // namespace idem::failover
