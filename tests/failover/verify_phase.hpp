// The check after a failover, against the new primary. First every key no caller got an answer
// for is settled by sending its request again (the same key and body) until it answers; then
//   - every acknowledged answer replays from the store byte for byte (a handler that refuses to
//     run proves the record is there: if it is called, the result was lost);
//   - no key has two different acknowledged answers (two executions seen by callers);
//   - the business table has exactly one execution per answered key, the one its answer names,
//     and never two for any key.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "idem/client.hpp"
#include "tests/failover/attempts.hpp"

namespace idem::failover {

struct VerifyOptions {
  int round = 1;
  // An asynchronous standby: an acknowledged answer missing (or executed again) is measured and
  // recorded as lost, not a failure. Two executions in the business table still fail.
  bool allow_loss = false;
  int threads = 4;
  std::chrono::seconds resolve_deadline{120};  // per unresolved key
  Pacing pacing;
};

struct VerifyTotals {  // over every round so far, this verification included
  long acknowledged = 0;       // keys with an acknowledged answer, checked now
  long unanswered_resolved = 0;  // of those, keys some request got no answer for first (any error)
  // Of those, keys in doubt: a commit of unknown fate, a lease holder whose step failed and that
  // carried on, or a holder cut off (LeaseLost).
  long in_doubt_resolved = 0;
  long outcome_unknown = 0;    // keys with a commit of unknown fate at some point
  long repeated_steps = 0;     // keys whose lease holder sent a failed step again, carrying on
  long fenced = 0;             // keys whose lease holder got LeaseLost at some point
  long in_doubt_survived = 0;  // keys whose answer is the execution of a commit of unknown fate
  long in_doubt_undone = 0;    // keys with such an execution that is not their answer (it was undone)
  long lost_missing = 0;       // acknowledged, then not on the new primary
  long lost_executed_again = 0;  // acknowledged, lost, then executed a second time
  long replays_checked = 0;    // replays compared, every verification summed
};

struct VerifySummary {
  long checked = 0;             // acknowledged answers replayed now
  long resolved = 0;            // unresolved keys settled now
  long resolved_by_replay = 0;  // of those: the cut-off attempt had committed
  long lost_now = 0;            // found lost by this verification
  // Keys executed twice: two rows in the business table, or (synchronous standby) two different
  // acknowledged answers. With an asynchronous one the latter is counted as lost_executed_again.
  long double_executions = 0;
  std::vector<std::string> violations;
  VerifyTotals totals;
};

// Each checking thread has its own Client on `uri`.
VerifySummary verify(const std::string& uri, const ClientOptions& client_options, const std::string& journal_dir,
                     const VerifyOptions& options);

}  // namespace idem::failover
