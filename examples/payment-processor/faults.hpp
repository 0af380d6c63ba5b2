// Test-only fault injection (POST /_control/faults): the next N payment requests (POST
// /v1/charges and /v1/refunds) fail the way real processors fail, so the demo and the tests can
// show what a caller must survive. A real processor cannot be told any of this.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string_view>

#include "api_response.hpp"

namespace processor {

enum class FaultMode {
  none,
  transient,  // 503 processor_unavailable at once: nothing charged, nothing stored under the key
  timeout,    // charge and commit normally, then wait `delay` before answering
  slow,       // wait `delay` holding the key's lock, then charge normally
};

std::optional<FaultMode> parse_fault_mode(std::string_view name);
const char* fault_mode_name(FaultMode mode);

struct Fault {
  FaultMode mode = FaultMode::none;
  std::chrono::milliseconds delay{0};
};

class FaultPlan {
 public:
  // Arms `mode` for the next `count` payment requests; FaultMode::none disarms.
  void arm(FaultMode mode, int count, std::chrono::milliseconds delay);

  // The fault for the payment request being served now, counting one off.
  Fault take();

  // {"mode","count" (still armed),"delay_ms"}.
  Json describe() const;

 private:
  mutable std::mutex mutex_;
  Fault fault_;
  int remaining_ = 0;
};

}  // namespace processor
