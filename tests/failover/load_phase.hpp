// The load a failover cuts into: worker threads sending new keys, duplicates of recent keys
// (concurrent ones meet in_progress, finished ones replay) and retries of keys left unresolved,
// half as single-transaction run, half as multi-step leases. Every answer goes to the journal.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "idem/client.hpp"
#include "tests/failover/attempts.hpp"
#include "tests/failover/journal.hpp"

namespace idem::failover {

struct LoadOptions {
  int round = 1;
  int threads = 16;
  double new_key_share = 0.5;                  // the rest: duplicates of recent keys
  std::chrono::milliseconds max_pause{10};     // between a worker's requests
  std::chrono::milliseconds retry_delay{500};  // before an unresolved key is sent again
  Pacing pacing;
};

struct LoadSummary {
  long requests = 0, keys = 0, acknowledged = 0, replays = 0, busy = 0, unresolved = 0, outcome_unknown = 0,
       fenced = 0, unexpected = 0;
  double longest_gap_seconds = 0;  // between two acknowledgements: the outage callers saw
};

// Runs until `stop` is raised, then lets each worker finish the request it is in. Each worker has
// its own Client on `uri`, like one instance of a service each: one stalled pool holds up one.
LoadSummary run_load(const std::string& uri, const ClientOptions& client_options, Journal& journal,
                     const LoadOptions& options, const std::atomic<bool>& stop);

}  // namespace idem::failover
