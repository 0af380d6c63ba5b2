// The crash workload's load threads (load.hpp).
#include "load.hpp"

#include <chrono>

#include "tests/support/split_mix64.hpp"

namespace crash {

void Load::start(int epoch) {
  stop();
  stopping_ = false;
  pool_start_ = 0;
  for (int i = 0; i < shape_.threads; ++i) threads_.emplace_back([this, i, epoch] { worker(i, epoch); });
}

void Load::stop() {
  stopping_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Load::worker(int thread_index, int epoch) {
  idem::testing::SplitMix64 rng(shape_.seed ^ (static_cast<std::uint64_t>(epoch) << 32) ^
                                static_cast<std::uint64_t>(thread_index + 1) * 0x9E3779B97F4A7C15ULL);
  while (!stopping_) {
    const auto dice = static_cast<int>(rng.below(100));
    Answer answer = Answer::result;
    std::optional<KeySpec> earlier;
    if (dice < shape_.replay_percent + shape_.mismatch_percent) earlier = ledger_.some_acknowledged(rng.next());
    if (earlier && dice < shape_.replay_percent) {
      answer = traffic_.send(*earlier);
    } else if (earlier) {
      answer = traffic_.probe_mismatch(*earlier);
    } else {
      const int index = pool_start_.load() + static_cast<int>(rng.below(shape_.pool));
      if (rng.chance(shape_.slide_one_in)) ++pool_start_;
      answer = traffic_.send(pool_key(run_id_, epoch, index));
    }
    // While the server is down every request fails at once: back off a little instead of spinning.
    if (answer == Answer::failed) std::this_thread::sleep_for(std::chrono::milliseconds(10 + rng.below(30)));
  }
}

}  // namespace crash
