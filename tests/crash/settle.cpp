// Resolution and verification after a restart (settle.hpp).
#include "settle.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "tests/support/split_mix64.hpp"

namespace crash {
namespace {

constexpr std::size_t kOlderSample = 100;  // older keys replayed at each settle
constexpr int kReplayTries = 20;          // failed replay requests (server still waking) per key

}  // namespace

bool Settle::run(ReplayScope scope, std::chrono::seconds resolve_deadline) {
  resolve(resolve_deadline);
  const std::string began = client_.query("SELECT now()::text").at(0).at(0).value();
  check_rows();
  // The audit trail grows with every request; a settle reads the rounds since the previous one
  // (a key executed twice across older rounds is caught by check_rows and the replays).
  check_double_charges(scope == ReplayScope::all ? "-infinity" : previous_settle_);
  previous_settle_ = began;
  replay(scope);
  ledger_.next_round();
  return ledger_.figures().violations == 0;
}

// Each open key again, round after round: a key whose COMMIT was in doubt answers its replay or
// runs once; a lease left by a crash answers 409 until it runs out, then resumes.
void Settle::resolve(std::chrono::seconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    const auto open = ledger_.open_keys();
    if (open.empty()) return;
    if (std::chrono::steady_clock::now() > until) {
      for (const auto& key : open) {
        ledger_.violation(key.name + ": still unresolved " + std::to_string(deadline.count()) + " s after the restart");
      }
      return;
    }
    for (const auto& key : open) traffic_.send(key);
    if (!ledger_.open_keys().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void Settle::check_rows() {
  struct Rows {
    long count = 0;
    std::int64_t first_id = 0;
  };
  std::map<std::string, Rows> by_key;
  const auto rows = client_.query(
      "SELECT key, count(*), min(id) FROM crash_orders WHERE run_id = $1 GROUP BY key", {run_id_});
  for (const auto& row : rows) {
    by_key[row.at(0).value()] = Rows{std::stol(row.at(1).value()), std::stoll(row.at(2).value())};
  }
  std::uint64_t checked = 0;
  for (const auto& ack : ledger_.all_acknowledged()) {
    const auto it = by_key.find(ack.key.name);
    if (it == by_key.end()) {
      ledger_.violation(ack.key.name + ": acknowledged result lost: no business row (its answer named order " +
                        std::to_string(ack.order_seq) + ")");
      continue;
    }
    if (it->second.count > 1) {
      ledger_.double_execution(ack.key.name + ": " + std::to_string(it->second.count) + " business rows");
    } else if (it->second.first_id != ack.order_seq) {
      ledger_.violation(ack.key.name + ": its answer named order " + std::to_string(ack.order_seq) +
                        ", the business row is order " + std::to_string(it->second.first_id));
    } else {
      ++checked;
    }
    by_key.erase(it);
  }
  for (const auto& [key, r] : by_key) {
    ledger_.violation(key + ": executed (" + std::to_string(r.count) + " business rows) but never acknowledged");
  }
  ledger_.rows_checked(checked);
}

// The extension's own forensics must agree: no idempotency record with two orders or two charges.
void Settle::check_double_charges(const std::string& since) {
  const auto rows = client_.query(
      "SELECT client_key, executions::text, order_ids::text, charge_ids::text"
      " FROM idem.double_charges($2::timestamptz) WHERE tenant_id = $1",
      {std::string(kTenant), since});
  for (const auto& row : rows) {
    ledger_.double_execution(row.at(0).value_or("?") + ": idem.double_charges lists it: executions " +
                             row.at(1).value_or("") + ", orders " + row.at(2).value_or("") + ", charges " +
                             row.at(3).value_or(""));
  }
}

void Settle::replay(ReplayScope scope) {
  std::vector<Acknowledged> keys;
  if (scope == ReplayScope::all) {
    keys = ledger_.all_acknowledged();
  } else {
    keys = ledger_.acknowledged_this_round();
    auto older = ledger_.all_acknowledged();
    idem::testing::SplitMix64 rng(older.size() * 0x9E3779B97F4A7C15ULL + keys.size());
    for (std::size_t i = 0; i < std::min(kOlderSample, older.size()); ++i) {
      keys.push_back(older[rng.below(older.size())]);
    }
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads_; ++t) {
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < keys.size(); i = next++) {
        int tries = 0;
        while (traffic_.verify_replay(keys[i]) == Answer::failed && ++tries < kReplayTries) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        if (tries == kReplayTries) ledger_.violation(keys[i].key.name + ": the replay check got no answer");
      }
    });
  }
  for (auto& w : workers) w.join();
}

}  // namespace crash
