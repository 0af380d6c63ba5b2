// ModelRun: purge_expired from its own session, inside or outside a transaction, and what it
// must delete.
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

// ------------------------------------------------------------------------------ purge

void ModelRun::purge_step(const Draw& d) {
  if (purge_open_) {
    const int choice = static_cast<int>(d[2] % 10);
    if (step_ - purge_since_ > kMaxPurgeTxSteps || (choice >= 4 && choice <= 6)) {
      purge_finish(true);
    } else if (choice == 7) {
      purge_finish(false);
    } else if (choice <= 3) {
      purge_call(d[3] % 3 == 0 ? 1 : 1000);
    }  // else: keep holding it open
    return;
  }
  if (d[2] % 10 < 3) {
    must(*purge_conn_, "BEGIN", "purge");
    purge_open_ = true;
    purge_since_ = step_;
    note("purge BEGIN");
  }
  purge_call(d[3] % 4 == 0 ? 1 : 1000);
}

void ModelRun::purge_call(int batch) {
  Reply r = stmt(*purge_conn_, kPurge, {std::to_string(batch)});
  const std::string what =
      std::string("purge_expired(") + std::to_string(batch) + ")" + (purge_open_ ? " in an open transaction" : "");
  if (r.state == "55P03" || r.seconds > kNoWaitSeconds) {
    violation("invariant 5: " + what + " waited (" + std::to_string(r.seconds) + " s, SQLSTATE " + r.state + ")");
  }
  if (!r.ok()) violation(what + " failed: SQLSTATE " + r.state + ": " + r.error);
  const Micros t0 = std::stoll(r.rows->text(0, "t0"));
  const Micros t1 = std::stoll(r.rows->text(0, "t1"));
  const int n = r.rows->integer(0, "n");
  // Which records vanished: from its own transaction's view, or (autocommit) from another connection.
  const auto rows = read_rows(purge_open_ ? *purge_conn_ : *observer_);
  std::vector<int> deleted;
  for (int k = 0; k < kKeys; ++k) {
    if (committed_[k].exists && !purge_deleted_.count(k) && !rows.count(keys_[k].handle)) deleted.push_back(k);
  }
  std::string list;
  for (int k : deleted) list += " k" + std::to_string(k);
  note(what + " -> " + std::to_string(n) + " [" + rel(t0) + "," + rel(t1) +
       "] deleted:" + (list.empty() ? " none" : list));
  if (static_cast<std::size_t>(n) != deleted.size()) {
    violation(what + " returned " + std::to_string(n) + " but " + std::to_string(deleted.size()) +
              " records vanished:" + list);
  }
  for (int k : deleted) {
    const Window h = history_at(committed_[k]);
    if (h.lo > t1 + kSlack) violation(what + " deleted " + klabel(k) + ", which is not history", k);
    const std::string held = locker(nullptr, k, false);
    if (!held.empty()) violation(what + " deleted " + klabel(k) + " which " + held + " holds (a key in use)", k);
  }
  // Fewer than the batch: every record that is history and not in use should be gone (the
  // records skipped because they are in use do not count against the batch).
  if (n < batch) {
    for (int k = 0; k < kKeys; ++k) {
      if (!committed_[k].exists || purge_deleted_.count(k)) continue;
      if (std::find(deleted.begin(), deleted.end(), k) != deleted.end()) continue;
      const Window h = history_at(committed_[k]);
      if (h.hi < t0 - kSlack && locker(nullptr, k, false).empty()) {
        std::string in_use;
        for (int o = 0; o < kKeys; ++o) {
          const std::string held = locker(nullptr, o, false);
          if (committed_[o].exists && !held.empty() && history_at(committed_[o]).lo <= t1 + kSlack) {
            in_use += " k" + std::to_string(o) + " (history since " + rel(history_at(committed_[o]).lo) +
                      ", held by " + held + ")";
          }
        }
        violation(what + " kept " + klabel(k) + ", history since " + rel(h.hi) + " and not in use; history records" +
                      " in use:" + (in_use.empty() ? " none" : in_use) +
                      " (records skipped because they are in use must not use up the batch)",
                  k);
      }
    }
  }
  if (purge_open_) {
    purge_deleted_.insert(deleted.begin(), deleted.end());
  } else {
    apply_purge(deleted);
  }
}

void ModelRun::apply_purge(const std::vector<int>& deleted) {
  for (int k : deleted) {
    Rec& c = committed_[k];
    c.hwm = std::max(c.hwm, c.gen);
    const int hwm = c.hwm;
    const std::uint64_t ver = c.ver;
    c = Rec{};
    c.hwm = hwm;
    c.ver = ver + 1;
    ++n_purged_;
  }
  cross_check(deleted);
}

void ModelRun::purge_finish(bool commit_it) {
  must(*purge_conn_, commit_it ? "COMMIT" : "ROLLBACK", "purge");
  purge_open_ = false;
  std::vector<int> deleted(purge_deleted_.begin(), purge_deleted_.end());
  purge_deleted_.clear();
  note(std::string("purge ") + (commit_it ? "COMMIT" : "ROLLBACK") + " (" + std::to_string(deleted.size()) +
       " deleted)");
  if (commit_it) apply_purge(deleted);
}

}  // namespace idem::it::model
