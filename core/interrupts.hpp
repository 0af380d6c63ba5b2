// Long loops in core/ (parsing, canonicalizing) let their host stop them: the backend installs a
// poll that turns a pending cancel or statement_timeout into an exception; the client installs none.
#pragma once

namespace idem {

// Called every kPollInterval units of work; may throw to abandon the work.
using InterruptPoll = void (*)();
inline constexpr unsigned kPollInterval = 4096;

void set_interrupt_poll(InterruptPoll poll) noexcept;

namespace detail {
extern InterruptPoll interrupt_poll;
extern thread_local unsigned poll_countdown;
void run_interrupt_poll();
}  // namespace detail

// One unit of work done: a counter decrement, and the host's poll every kPollInterval calls.
inline void poll_interrupts() {
  if (--detail::poll_countdown == 0) detail::run_interrupt_poll();
}

}  // namespace idem
