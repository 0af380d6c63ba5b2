// SplitMix64: a tiny deterministic generator for test and benchmark inputs. The same sequence on
// every platform and standard library (std:: distributions are not), so fixed seeds stay fixed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace idem::testing {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool chance(std::size_t one_in) { return below(one_in) == 0; }
  template <typename T, std::size_t N>
  const T& pick(const T (&items)[N]) {
    return items[below(N)];
  }

 private:
  std::uint64_t state_;
};

}  // namespace idem::testing
