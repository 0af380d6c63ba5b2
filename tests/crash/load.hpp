// The crash workload's load: N threads sending requests until stopped, most for a fixed-size pool
// of the current epoch's keys, reused at random (so duplicates and concurrent duplicates happen);
// the pool slides forward as requests go, so fresh keys keep executing until the kill. Some
// requests replay an earlier acknowledged key, some change an acknowledged key's body.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "ledger.hpp"
#include "traffic.hpp"

namespace crash {

struct LoadShape {
  int threads = 8;
  int pool = 64;            // keys in the sliding pool
  int slide_one_in = 4;     // one request in this many moves the pool by one key: ~4 requests a key
  int replay_percent = 8;    // requests for an earlier acknowledged key
  int mismatch_percent = 3;  // a changed body for an acknowledged key
  std::uint64_t seed = 1;
};

class Load {
 public:
  Load(Traffic& traffic, Ledger& ledger, std::string run_id, LoadShape shape)
      : traffic_(traffic), ledger_(ledger), run_id_(std::move(run_id)), shape_(shape) {}
  ~Load() { stop(); }

  void start(int epoch);
  void stop();  // returns when every thread has finished its request
  bool running() const { return !threads_.empty(); }

 private:
  void worker(int thread_index, int epoch);

  Traffic& traffic_;
  Ledger& ledger_;
  std::string run_id_;
  LoadShape shape_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> pool_start_{0};  // the pool is pool_key(epoch, pool_start_ .. + pool - 1)
  std::vector<std::thread> threads_;
};

}  // namespace crash
