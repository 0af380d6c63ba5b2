// The workload's conversation with scripts/crash.sh: commands on stdin, one answer line each on
// stdout, so the driver decides when the load runs and when, after a restart, it is checked.
//   go EPOCH     start the load on EPOCH's key pool          -> "going EPOCH"
//   held KEY     KEY's holder died holding it: resolve it    -> "noted KEY"
//   settle       stop the load, resolve, check               -> "settled <figures>"
//   final        the same, replaying every acknowledged key  -> "final <figures>", then exit
// The exit status is 1 when any violation was found, 0 otherwise.
#pragma once

#include <chrono>
#include <string>

#include "load.hpp"

namespace crash {

struct WorkloadConfig {
  std::string url;
  std::string ledger_path;
  std::string run_id;
  LoadShape shape;
  std::chrono::milliseconds lease{2000};
  std::chrono::seconds resolve_deadline{90};
};

int serve_commands(const WorkloadConfig& config);

}  // namespace crash
