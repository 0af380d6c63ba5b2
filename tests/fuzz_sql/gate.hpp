// Lets one session run a checked call alone: ordinary transactions pass the gate shared, a
// checked call waits until none is open and keeps new ones out until it is done, so a state
// digest taken before and after it sees only what that call did. Writer-preferring: with four
// sessions always busy, a reader-preferring lock would starve the checker.
#pragma once

#include <condition_variable>
#include <mutex>

namespace idem::fuzz_sql {

class Gate {
 public:
  void enter_shared() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !exclusive_ && waiting_ == 0; });
    ++shared_;
  }
  void leave_shared() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--shared_ == 0) changed_.notify_all();
  }
  void enter_exclusive() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    changed_.wait(lock, [&] { return !exclusive_ && shared_ == 0; });
    --waiting_;
    exclusive_ = true;
  }
  void leave_exclusive() {
    std::lock_guard<std::mutex> lock(mutex_);
    exclusive_ = false;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int shared_ = 0;
  int waiting_ = 0;
  bool exclusive_ = false;
};

}  // namespace idem::fuzz_sql
