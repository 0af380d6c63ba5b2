// Bounded rings of real values, one per kind, behind one mutex (sessions add and pick a few per
// call; contention is negligible beside a round trip).
#include "tests/fuzz_sql/pools.hpp"

namespace idem::fuzz_sql {

void Pools::add(const std::string& kind, const std::string& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& ring = values_[kind];
  if (ring.size() < kCapacity) {
    ring.push_back(value);
  } else {
    ring[next_[kind]++ % kCapacity] = value;
  }
}

std::optional<std::string> Pools::pick(const std::string& kind, Rng& rng) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = values_.find(kind);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second[rng.below(it->second.size())];
}

void Pools::add_holder(Holder holder) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (holders_.size() < kCapacity) {
    holders_.push_back(std::move(holder));
  } else {
    holders_[next_holder_++ % kCapacity] = std::move(holder);
  }
}

std::optional<Pools::Holder> Pools::pick_holder(Rng& rng) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (holders_.empty()) return std::nullopt;
  return holders_[rng.below(holders_.size())];
}

}  // namespace idem::fuzz_sql
