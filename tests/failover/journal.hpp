// The workload's record of what callers were told, one JSON object per line, appended and flushed
// as it happens: every key before its first request, every acknowledged answer (exact bytes, hex),
// every request left unresolved. verify reads all rounds' files back as a History: what clients
// were promised is what the new primary must still answer.
#pragma once

#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tests/failover/attempts.hpp"
#include "tests/failover/key_spec.hpp"

namespace idem::failover {

class Journal {
 public:
  // Appends to <dir>/round-<NNN>-<phase>.jsonl.
  Journal(const std::string& dir, int round, const std::string& phase);
  void key(const KeySpec& spec);                         // before the key's first request
  void outcome(const KeySpec& spec, const Outcome& o);   // busy is not recorded
  void lost(const std::string& key, const std::string& how);  // an acknowledged answer gone
  void verified(long replays_checked);                   // one verification done

 private:
  void write(const std::string& line);
  std::mutex mutex_;
  std::ofstream out_;
  std::string path_;
  int round_;
};

struct KeyHistory {
  KeySpec spec;
  std::vector<Answer> answers;  // every acknowledged answer, in the order recorded
  int unresolved = 0;           // requests that ended without an answer (all reasons below)
  int outcome_unknown = 0;      // of those: a commit of unknown fate
  int fenced = 0;               // of those: a lease holder that got LeaseLost
  std::vector<std::string> in_doubt_executions;  // handler runs whose COMMIT's fate was unknown
  int repeated_steps = 0;       // lease steps a holder sent again after they failed
  std::vector<std::string> unexpected;  // answers the workload never provokes
  std::optional<std::string> lost;      // set once a verification found the answer gone
};

struct History {
  std::map<std::string, KeyHistory> keys;
  long replays_checked = 0;  // over every verification so far
  int verifications = 0;
};

// Every round-*.jsonl file of `dir`, in name order (rounds, then phases). Throws on a bad line.
History load_history(const std::string& dir);

}  // namespace idem::failover
