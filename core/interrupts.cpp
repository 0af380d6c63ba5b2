// The host's interrupt poll (see interrupts.hpp).
#include "core/interrupts.hpp"

namespace idem {
namespace detail {

InterruptPoll interrupt_poll = nullptr;
thread_local unsigned poll_countdown = kPollInterval;

void run_interrupt_poll() {
  poll_countdown = kPollInterval;
  if (interrupt_poll != nullptr) interrupt_poll();
}

}  // namespace detail

void set_interrupt_poll(InterruptPoll poll) noexcept { detail::interrupt_poll = poll; }

}  // namespace idem
