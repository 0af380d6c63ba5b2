// Holder death: a process that begins a key with a short lease, checkpoints "charged" with the
// key's charge data, and dies (_exit) before complete. The workload's next request for the key,
// once the lease ran out, must be resumed at that checkpoint and complete once (traffic.cpp).
#pragma once

#include <chrono>
#include <string>

namespace crash {

// Returns only on failure (an exit status); on success the process is gone.
int hold_and_die(const std::string& url, const std::string& key, std::chrono::milliseconds lease);

}  // namespace crash
