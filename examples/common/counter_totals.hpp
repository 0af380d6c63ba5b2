// A Prometheus counter fed from a total kept elsewhere (a client's or a consumer's stats, read at
// each scrape): it only goes up, by what the total gained since the last scrape.
#pragma once

#include <prometheus/counter.h>

#include <cstdint>

namespace demo_common {

inline void catch_up(prometheus::Counter& counter, std::uint64_t total, std::uint64_t seen, double unit = 1.0) {
  if (total > seen) counter.Increment(static_cast<double>(total - seen) * unit);
}

}  // namespace demo_common
