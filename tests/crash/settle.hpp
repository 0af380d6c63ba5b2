// The crash workload's check after the server came back: retry every unresolved key with the
// same key until it has its result, then compare the ledger with the database — one business row
// per acknowledged key, naming the row its answer named, none for a key never acknowledged, no
// double charge in the audit trail — and replay acknowledged keys byte for byte.
#pragma once

#include <chrono>
#include <string>

#include "idem/client.hpp"
#include "ledger.hpp"
#include "traffic.hpp"

namespace crash {

enum class ReplayScope {
  this_round,  // keys acknowledged since the last settle, plus a random sample of older ones
  all,         // every key acknowledged in the run
};

class Settle {
 public:
  Settle(idem::Client& client, Traffic& traffic, Ledger& ledger, std::string run_id, int threads)
      : client_(client), traffic_(traffic), ledger_(ledger), run_id_(std::move(run_id)), threads_(threads) {}

  // Returns whether no violation was found so far in the run.
  bool run(ReplayScope scope, std::chrono::seconds resolve_deadline);

 private:
  void resolve(std::chrono::seconds deadline);
  void check_rows();
  // Audit rows since `since` (timestamptz text): the last round's for a settle, all for the final.
  void check_double_charges(const std::string& since);
  void replay(ReplayScope scope);

  idem::Client& client_;
  Traffic& traffic_;
  Ledger& ledger_;
  std::string run_id_;
  int threads_;
  std::string previous_settle_ = "-infinity";  // when the previous settle began (the server's clock)
};

}  // namespace crash
