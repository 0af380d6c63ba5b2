// ModelRun: one step of a session (the weighted choice of an action from the
// draw) and sleeps.
#include "tests/integration/model/model_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace idem::it::model {

// ------------------------------------------------------------------------------
// the driver

ModelRun::Act
ModelRun::weighted(std::uint64_t r,
                   const std::vector<std::pair<Act, int>> &options) {
  int total = 0;
  for (const auto &[a, w] : options)
    total += w;
  int x = static_cast<int>(r % static_cast<std::uint64_t>(total));
  for (const auto &[a, w] : options) {
    if (x < w)
      return a;
    x -= w;
  }
  return options.front().first;
}

void ModelRun::session_step(Session &s, const Draw &d) {
  const int k = static_cast<int>(d[4] % kKeys);
  const int vroll = static_cast<int>(d[5] % 100);
  const int variant = vroll < 65 ? 0 : vroll < 88 ? 1 : 2;
  const Micros lease = kLeases[d[6] % 4];
  const Micros ttl = kTtls[d[7] % 3];
  const bool wait = d[8] % 100 < 6;
  Act a;
  if (s.tx) {
    ++s.tx->steps;
    const bool sp = !s.tx->frames.empty();
    if (s.tx->steps > kMaxTxSteps) {
      if (d[2] % 5 == 0)
        rollback(s);
      else
        commit(s);
      return;
    }
    a = weighted(d[2], {{Act::acquire, 30},
                        {Act::checkpoint, 9},
                        {Act::complete, 14},
                        {Act::release, 6},
                        {Act::savepoint, s.tx->frames.size() < 2 ? 6 : 0},
                        {Act::rollback_to, sp ? 6 : 0},
                        {Act::release_sp, sp ? 2 : 0},
                        {Act::commit, 14},
                        {Act::rollback, 4},
                        {Act::prepare, prepared_.size() < kMaxPrepared ? 3 : 0},
                        {Act::stale, 5},
                        {Act::sleep, 2}});
  } else {
    a = weighted(d[2], {{Act::begin, 40},
                        {Act::acquire, 15},
                        {Act::checkpoint, 4},
                        {Act::complete, 6},
                        {Act::release, 3},
                        {Act::finish_prepared, prepared_.empty() ? 0 : 8},
                        {Act::stale, 4},
                        {Act::sleep, 3}});
  }
  // One dispatch for both branches: an action means the same inside a
  // transaction or outside it (the weights above decide which ones can be drawn
  // where).
  switch (a) {
  case Act::begin: {
    static const Isolation kLevels[] = {Isolation::read_committed,
                                        Isolation::repeatable_read,
                                        Isolation::serializable};
    begin(s, kLevels[d[3] % 3]);
    break;
  }
  case Act::acquire:
    acquire(s, k, variant, lease, ttl, wait);
    break;
  case Act::checkpoint:
  case Act::complete:
  case Act::release: {
    // A holder call when this session holds a key, else an acquire of the drawn
    // one.
    const Call c = a == Act::checkpoint ? Call::checkpoint
                   : a == Act::complete ? Call::complete
                                        : Call::release;
    if (!try_holder(s, c, d))
      acquire(s, k, variant, lease, ttl, wait);
    break;
  }
  case Act::savepoint:
    savepoint(s);
    break;
  case Act::rollback_to:
    rollback_to(s, d[3] % s.tx->frames.size());
    break;
  case Act::release_sp:
    release_savepoint(s, d[3] % s.tx->frames.size());
    break;
  case Act::commit:
    commit(s);
    break;
  case Act::rollback:
    rollback(s);
    break;
  case Act::prepare:
    prepare(s);
    break;
  case Act::finish_prepared:
    finish_prepared(s, d[3] % prepared_.size(), d[9] % 4 != 0);
    break;
  case Act::stale:
    stale_call(s, d);
    break;
  case Act::sleep:
    sleep(d);
    break;
  default:
    break;
  }
}

void ModelRun::sleep(const Draw &d) {
  const int ms = d[9] % 5 == 0 ? 100 + static_cast<int>(d[10] % 250)
                               : 1 + static_cast<int>(d[10] % 20);
  note("sleep " + std::to_string(ms) + "ms");
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

} // namespace idem::it::model
