// The workload's load phase; see load_phase.hpp.
#include "tests/failover/load_phase.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace idem::failover {
namespace {

using Clock = std::chrono::steady_clock;

// What the workers share: the recent keys duplicates are drawn from, the keys to send again, and
// the tallies.
class Board {
 public:
  Board(const LoadOptions& options, Journal& journal) : options_(options), journal_(journal) {}

  // The next request: a due retry first, else a new key or a duplicate of a recent one. A new
  // key is journaled here, before another worker can draw it as a duplicate: verify must know
  // every key before any answer for it (journaled by the worker that drew it, a duplicate's
  // answer could come first).
  KeySpec next(std::mt19937_64& rng, bool& retry) {
    std::lock_guard<std::mutex> lock(mutex_);
    retry = false;
    const auto now = Clock::now();
    for (auto it = retries_.begin(); it != retries_.end(); ++it) {
      if (it->second.due <= now) {
        KeySpec spec = it->second.spec;
        retries_.erase(it);
        retry = true;
        return spec;
      }
    }
    if (recent_.empty() || std::uniform_real_distribution<double>(0, 1)(rng) < options_.new_key_share) {
      const Kind kind = std::uniform_int_distribution<int>(0, 1)(rng) ? Kind::run : Kind::lease;
      KeySpec spec = new_key(options_.round, kind);
      journal_.key(spec);
      recent_.push_back(spec);
      if (recent_.size() > 64) recent_.pop_front();
      ++summary_.keys;
      return spec;
    }
    return recent_[std::uniform_int_distribution<std::size_t>(0, recent_.size() - 1)(rng)];
  }

  void record(const KeySpec& spec, const Outcome& o, bool retry) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++summary_.requests;
    switch (o.type) {
      case Outcome::Type::acknowledged: {
        ++summary_.acknowledged;
        if (o.replayed) ++summary_.replays;
        const auto now = Clock::now();
        if (last_ack_) summary_.longest_gap_seconds =
            std::max(summary_.longest_gap_seconds, std::chrono::duration<double>(now - *last_ack_).count());
        last_ack_ = now;
        retries_.erase(spec.key);
        return;
      }
      case Outcome::Type::busy:
        ++summary_.busy;
        // A retry that meets in_progress waits for the holder (perhaps one the failover cut off,
        // whose lease must run out); a duplicate that meets it is simply answered 409.
        if (retry) again(spec);
        return;
      case Outcome::Type::fenced: ++summary_.fenced; break;
      case Outcome::Type::unexpected: ++summary_.unexpected; return;
      case Outcome::Type::unresolved: break;
    }
    ++summary_.unresolved;
    if (o.outcome_unknown) ++summary_.outcome_unknown;
    again(spec);
  }

  LoadSummary summary() {
    std::lock_guard<std::mutex> lock(mutex_);
    return summary_;
  }

 private:
  struct Retry {
    KeySpec spec;
    Clock::time_point due;
  };
  void again(const KeySpec& spec) { retries_[spec.key] = Retry{spec, Clock::now() + options_.retry_delay}; }

  const LoadOptions& options_;
  Journal& journal_;
  std::mutex mutex_;
  std::deque<KeySpec> recent_;
  std::map<std::string, Retry> retries_;
  LoadSummary summary_;
  std::optional<Clock::time_point> last_ack_;
};

void work(const std::string& uri, const ClientOptions& client_options, Journal& journal, const LoadOptions& options,
          const std::atomic<bool>& stop, Board& board) {
  Client client(uri, client_options);
  std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<long> pause(0, options.max_pause.count());
  while (!stop.load()) {
    bool retry = false;
    const KeySpec spec = board.next(rng, retry);
    const Outcome o = perform(client, spec, options.pacing);
    journal.outcome(spec, o);
    board.record(spec, o, retry);
    std::this_thread::sleep_for(std::chrono::milliseconds(pause(rng)));
  }
}

}  // namespace

LoadSummary run_load(const std::string& uri, const ClientOptions& client_options, Journal& journal,
                     const LoadOptions& options, const std::atomic<bool>& stop) {
  Board board(options, journal);
  std::vector<std::thread> workers;
  for (int i = 0; i < options.threads; ++i) {
    workers.emplace_back([&] { work(uri, client_options, journal, options, stop, board); });
  }
  for (auto& w : workers) w.join();
  return board.summary();
}

}  // namespace idem::failover
