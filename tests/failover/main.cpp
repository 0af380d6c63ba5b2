// failover-workload: the client side of scripts/failover.sh (docs/reliability.md, "Failover").
//   setup  --uri U                          the business table, once, on the first primary
//   load   --uri U --journal D --round N    requests until SIGTERM, journaled; a failover cuts in
//   verify --uri U --journal D --round N    settle what is unresolved, check every answer ever given
// U is a multi-host URI with target_session_attrs=read-write, so the client follows the primary.
// Exit status: 0 ok, 1 a violation (verify) or an unexpected answer, 2 usage or setup error.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "idem/client.hpp"
#include "tests/failover/journal.hpp"
#include "tests/failover/key_spec.hpp"
#include "tests/failover/load_phase.hpp"
#include "tests/failover/verify_phase.hpp"

namespace {

using namespace idem::failover;

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

struct Args {
  std::string mode;
  std::map<std::string, std::string> values;  // --name value
  bool has(const std::string& name) const { return values.count(name) > 0; }
  std::string get(const std::string& name) const {
    const auto found = values.find(name);
    if (found == values.end()) throw std::invalid_argument("missing --" + name);
    return found->second;
  }
  int number(const std::string& name, int fallback) const { return has(name) ? std::stoi(get(name)) : fallback; }
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) throw std::invalid_argument("no mode");
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument " + arg);
    if (arg == "--allow-loss") {
      a.values["allow-loss"] = "1";
    } else if (i + 1 < argc) {
      a.values[arg.substr(2)] = argv[++i];
    } else {
      throw std::invalid_argument(arg + " needs a value");
    }
  }
  return a;
}

std::chrono::milliseconds lease_of(const Args& a) { return std::chrono::milliseconds(a.number("lease-ms", 2000)); }

// For a Client of one thread (each worker has its own, like an instance of a service).
idem::ClientOptions client_options(const Args& a) {
  idem::ClientOptions o;
  // Short, so a lease holder the failover stalls loses its lease to a retry of the key.
  o.lease = lease_of(a);
  o.pool_size = 2;
  o.acquire_timeout = std::chrono::seconds(10);
  return o;
}

// A stalled holder sleeps past its lease before it retries its step.
Pacing pacing_of(const Args& a) {
  Pacing p;
  p.stall = lease_of(a) + std::chrono::milliseconds(1000);
  return p;
}

int setup(const Args& a) {
  idem::ClientOptions o;
  o.allow_missing_key = true;
  idem::Client client(a.get("uri"), o);
  client.run(idem::Request{"acme", "failover-setup", "POST", "/setup", std::nullopt, "", {}, "create"},
             [](idem::Attempt& attempt) {
               attempt.exec(kExecutionsTable);
               return idem::Response{};
             });
  std::cout << "setup: failover_executions ready\n";
  return 0;
}

int load(const Args& a) {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
  LoadOptions options;
  options.round = a.number("round", 1);
  options.threads = a.number("threads", options.threads);
  options.pacing = pacing_of(a);
  Journal journal(a.get("journal"), options.round, "load");
  const LoadSummary s = run_load(a.get("uri"), client_options(a), journal, options, g_stop);
  char gap[32];
  std::snprintf(gap, sizeof gap, "%.1f", s.longest_gap_seconds);
  std::cout << "load: round " << options.round << ": " << s.requests << " requests on " << s.keys << " keys, "
            << s.acknowledged << " acknowledged (" << s.replays << " replays), " << s.busy << " in progress (409), "
            << s.unresolved << " unresolved (" << s.outcome_unknown << " outcome unknown, " << s.fenced
            << " lease holders fenced), " << s.unexpected << " unexpected; longest wait between acknowledgements "
            << gap << " s\n";
  return s.unexpected == 0 ? 0 : 1;
}

int verify_round(const Args& a) {
  VerifyOptions options;
  options.round = a.number("round", 1);
  options.allow_loss = a.has("allow-loss");
  options.pacing = pacing_of(a);
  options.pacing.stall_share = 0;  // settling keys: no holder of ours stalls
  const VerifySummary s = verify(a.get("uri"), client_options(a), a.get("journal"), options);
  const VerifyTotals& t = s.totals;
  std::cout << "verify: round " << options.round << ": " << s.resolved << " unresolved keys settled ("
            << s.resolved_by_replay << " by replay: the cut-off attempt had committed; "
            << s.resolved - s.resolved_by_replay << " executed now), " << s.checked
            << " acknowledged answers replayed byte for byte, " << s.lost_now << " lost now, " << s.violations.size()
            << " violations\n";
  std::cout << "totals: acknowledged=" << t.acknowledged << " unanswered_resolved=" << t.unanswered_resolved
            << " in_doubt_resolved=" << t.in_doubt_resolved << " outcome_unknown=" << t.outcome_unknown
            << " repeated_steps=" << t.repeated_steps
            << " fenced=" << t.fenced << " in_doubt_survived=" << t.in_doubt_survived
            << " in_doubt_undone=" << t.in_doubt_undone
            << " double_executions=" << s.double_executions << " lost=" << t.lost_missing + t.lost_executed_again
            << " lost_missing=" << t.lost_missing << " lost_executed_again=" << t.lost_executed_again
            << " replays_checked=" << t.replays_checked << "\n";
  std::size_t shown = 0;
  for (const std::string& v : s.violations) {
    if (++shown > 20) {
      std::cerr << "VIOLATION: ... and " << s.violations.size() - 20 << " more\n";
      break;
    }
    std::cerr << "VIOLATION: " << v << '\n';
  }
  return s.violations.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    if (a.mode == "setup") return setup(a);
    if (a.mode == "load") return load(a);
    if (a.mode == "verify") return verify_round(a);
    throw std::invalid_argument("unknown mode " + a.mode);
  } catch (const std::invalid_argument& e) {
    std::cerr << "failover-workload: " << e.what() << "\nusage: " << argv[0]
              << " setup|load|verify --uri URI [--journal DIR --round N] [--threads N] [--lease-ms MS]"
                 " [--allow-loss]\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "failover-workload: " << e.what() << '\n';
    return 2;
  }
}
