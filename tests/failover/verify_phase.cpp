// The verification after each failover; see verify_phase.hpp.
#include "tests/failover/verify_phase.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "tests/failover/journal.hpp"

namespace idem::failover {
namespace {

using Clock = std::chrono::steady_clock;

// Thrown by the replay check's handler: being called at all means the store lost the record.
struct NotStored : std::runtime_error {
  NotStored() : std::runtime_error("the handler was called: no stored result") {}
};

// f(client, i) for i in [0, n) on `threads` threads, each with a Client of its own (a pool is
// held up by a refusal's COMMIT that waits: docs/reliability.md, "Failover", "Findings").
void parallel(const std::string& uri, const ClientOptions& client_options, std::size_t n, int threads,
              const std::function<void(Client&, std::size_t)>& f) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      Client client(uri, client_options);
      for (std::size_t i; (i = next++) < n;) f(client, i);
    });
  }
  for (auto& t : pool) t.join();
}

class Verification {
 public:
  Verification(const std::string& uri, const ClientOptions& client_options, const std::string& dir,
               const VerifyOptions& options)
      : uri_(uri),
        client_options_(client_options),
        options_(options),
        history_(load_history(dir)),
        journal_(dir, options.round, "verify") {}

  VerifySummary run() {
    for (const auto& [key, k] : history_.keys) {
      for (const std::string& why : k.unexpected) violation(key, "answered what the workload never provokes: " + why);
    }
    settle_unresolved();
    check_answers_agree();
    check_replays();
    check_executions();
    journal_.verified(summary_.checked);
    total_up();
    return summary_;
  }

 private:
  void violation(const std::string& key, const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    summary_.violations.push_back("key " + key + ": " + what);
  }

  // Recorded as lost (so later rounds do not count it again); a violation unless the standby is
  // asynchronous, where losing it is what is measured.
  void lost(KeyHistory& k, const std::string& how, const std::string& what) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      k.lost = how;
      journal_.lost(k.spec.key, how);
      ++summary_.lost_now;
    }
    if (!options_.allow_loss) violation(k.spec.key, what);
  }

  // Sends each unanswered key's request again until it answers: a replay (the cut-off attempt
  // committed) or its one execution now.
  void settle_unresolved() {
    std::vector<KeyHistory*> open;
    for (auto& [key, k] : history_.keys) {
      if (k.answers.empty() && !k.lost) open.push_back(&k);
    }
    parallel(uri_, client_options_, open.size(), options_.threads, [&](Client& client, std::size_t i) {
      KeyHistory& k = *open[i];
      const auto deadline = Clock::now() + options_.resolve_deadline;
      for (;;) {
        const Outcome o = perform(client, k.spec, options_.pacing);
        journal_.outcome(k.spec, o);
        if (o.type == Outcome::Type::acknowledged) {
          std::lock_guard<std::mutex> lock(mutex_);
          k.answers.push_back(o.answer);
          ++summary_.resolved;
          if (o.replayed) ++summary_.resolved_by_replay;
          return;
        }
        if (o.type == Outcome::Type::unexpected) return violation(k.spec.key, "answered " + o.why);
        if (Clock::now() >= deadline) return violation(k.spec.key, "still unresolved: " + o.why);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // busy: a cut-off lease runs out
      }
    });
  }

  // Two different acknowledged answers for one key: two executions, each promised to a caller.
  void check_answers_agree() {
    for (auto& [key, k] : history_.keys) {
      if (k.lost) continue;
      for (const Answer& a : k.answers) {
        if (a != k.answers.front()) {
          if (!options_.allow_loss) ++summary_.double_executions;
          lost(k, "executed_again",
               "two different acknowledged answers, executions " + k.answers.front().execution_id() + " and " +
                   a.execution_id() + " (a double execution)");
          break;
        }
      }
    }
  }

  // Every acknowledged answer, replayed through the client by a handler that must not run.
  void check_replays() {
    std::vector<KeyHistory*> answered;
    for (auto& [key, k] : history_.keys) {
      if (!k.answers.empty() && !k.lost) answered.push_back(&k);
    }
    parallel(uri_, client_options_, answered.size(), options_.threads,
             [&](Client& client, std::size_t i) { check_replay(client, *answered[i]); });
  }

  void check_replay(Client& client, KeyHistory& k) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    for (;;) {
      std::string why;
      try {
        const Response r = client.run(request_of(k.spec), [](Attempt&) -> Response { throw NotStored(); });
        bool replayed = false;
        const Answer a = answer_of(r, &replayed);
        if (replayed) {
          const std::string told = k.answers.front().execution_id();
          if (a.execution_id() != told) {
            return lost(k, "executed_again",
                        "the store replays execution " + a.execution_id() + ", callers were told " + told);
          }
          if (a != k.answers.front()) {
            return violation(k.spec.key, "replays other bytes than callers were told (execution " + told + ")");
          }
          std::lock_guard<std::mutex> lock(mutex_);
          ++summary_.checked;
          return;
        }
        why = "answered " + std::to_string(r.status) + " " + r.body;  // 409 while a lease runs out
      } catch (const NotStored&) {
        return lost(k, "missing", "acknowledged answer (execution " + k.answers.front().execution_id() +
                                      ") missing on the new primary: the next request with the key runs it again");
      } catch (const ClientError& e) {
        why = e.what();
      }
      if (Clock::now() >= deadline) return violation(k.spec.key, "replay check did not finish: " + why);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }

  // The business table: one execution per answered key, the one the answer names; never two.
  void check_executions() {
    std::map<std::string, std::vector<std::string>> executions;
    Client client(uri_, client_options_);
    for (const SqlRow& row : client.query("SELECT key, exec_id FROM failover_executions ORDER BY executed_at")) {
      executions[row.at(0).value()].push_back(row.at(1).value());
    }
    for (const auto& [key, ids] : executions) {
      const auto found = history_.keys.find(key);
      if (found == history_.keys.end()) {
        violation(key, "executed, but the workload never sent it");
      } else if (ids.size() > 1) {
        ++summary_.double_executions;
        violation(key, "executed " + std::to_string(ids.size()) + " times (" + ids[0] + ", " + ids[1] +
                           "): a double execution");
      }
    }
    for (const auto& [key, k] : history_.keys) {
      if (k.lost || k.answers.empty()) continue;
      const auto found = executions.find(key);
      const std::string named = k.answers.front().execution_id();
      if (found == executions.end()) {
        violation(key, "answered (execution " + named + ") but the business table has no execution");
      } else if (found->second.front() != named) {
        violation(key, "answered execution " + named + ", the business table holds " + found->second.front());
      }
    }
  }

  void total_up() {
    VerifyTotals& t = summary_.totals;
    for (const auto& [key, k] : history_.keys) {
      if (k.outcome_unknown > 0) ++t.outcome_unknown;
      if (k.repeated_steps > 0) ++t.repeated_steps;
      if (k.fenced > 0) ++t.fenced;
      if (k.lost) {
        ++(*k.lost == "missing" ? t.lost_missing : t.lost_executed_again);
      } else if (!k.answers.empty()) {
        ++t.acknowledged;
        if (k.unresolved > 0) ++t.unanswered_resolved;
        if (k.outcome_unknown > 0 || k.repeated_steps > 0 || k.fenced > 0) ++t.in_doubt_resolved;
        if (!k.in_doubt_executions.empty()) {
          const std::string answer = k.answers.front().execution_id();
          const auto& e = k.in_doubt_executions;
          ++(std::find(e.begin(), e.end(), answer) != e.end() ? t.in_doubt_survived : t.in_doubt_undone);
        }
      }
    }
    t.replays_checked = history_.replays_checked + summary_.checked;
  }

  const std::string uri_;
  const ClientOptions client_options_;
  const VerifyOptions& options_;
  History history_;
  Journal journal_;
  std::mutex mutex_;
  VerifySummary summary_;
};

}  // namespace

VerifySummary verify(const std::string& uri, const ClientOptions& client_options, const std::string& journal_dir,
                     const VerifyOptions& options) {
  return Verification(uri, client_options, journal_dir, options).run();
}

}  // namespace idem::failover
