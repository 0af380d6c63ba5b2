// Fault injection state; see faults.hpp.
#include "faults.hpp"

#include <utility>

namespace processor {
namespace {

constexpr std::pair<FaultMode, const char*> kModeNames[] = {
    {FaultMode::none, "none"},
    {FaultMode::transient, "transient"},
    {FaultMode::timeout, "timeout"},
    {FaultMode::slow, "slow"},
};

}  // namespace

std::optional<FaultMode> parse_fault_mode(std::string_view name) {
  for (const auto& [mode, mode_name] : kModeNames)
    if (name == mode_name) return mode;
  return std::nullopt;
}

const char* fault_mode_name(FaultMode mode) {
  for (const auto& [known, name] : kModeNames)
    if (known == mode) return name;
  return "none";
}

void FaultPlan::arm(FaultMode mode, int count, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool armed = mode != FaultMode::none && count > 0;
  fault_ = armed ? Fault{mode, delay} : Fault{};
  remaining_ = armed ? count : 0;
}

Fault FaultPlan::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (remaining_ == 0) return {};
  const Fault taken = fault_;
  if (--remaining_ == 0) fault_ = {};
  return taken;
}

Json FaultPlan::describe() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Json{{"mode", fault_mode_name(fault_.mode)}, {"count", remaining_}, {"delay_ms", fault_.delay.count()}};
}

}  // namespace processor
