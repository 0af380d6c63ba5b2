// The workload's command loop (commands.hpp).
#include "commands.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "ledger.hpp"
#include "settle.hpp"
#include "traffic.hpp"

namespace crash {
namespace {

std::string figures_line(const Figures& f, double seconds) {
  std::ostringstream out;
  out << "acknowledged=" << f.acknowledged << " keys=" << f.keys_acknowledged << " requests=" << f.requests
      << " executions=" << f.executions << " replays=" << f.replays << " in_progress=" << f.in_progress
      << " mismatches_refused=" << f.mismatches_refused;
  for (int i = 0; i < 6; ++i) out << ' ' << failure_name(static_cast<Failure>(i)) << '=' << f.failures[i];
  out << " unresolved_resolved=" << f.unresolved_resolved << " in_doubt_resolved=" << f.in_doubt_resolved
      << " in_doubt_committed=" << f.in_doubt_committed << " holders_resumed=" << f.holders_resumed
      << " lease_resumes=" << f.lease_resumes
      << " replays_verified=" << f.replays_verified << " rows_checked=" << f.rows_checked
      << " double_executions=" << f.double_executions << " violations=" << f.violations << " seconds=" << std::fixed
      << std::setprecision(2) << seconds;
  return out.str();
}

void answer(const std::string& line) {
  std::cout << line << std::endl;  // endl: the driver waits for this line
}

}  // namespace

int serve_commands(const WorkloadConfig& config) {
  idem::ClientOptions options;
  options.lease = config.lease;
  options.pool_size = static_cast<std::size_t>(config.shape.threads) + 2;
  idem::Client client(config.url, options);
  Ledger ledger(config.ledger_path);
  ledger.note("start", R"({"run_id":")" + config.run_id + R"("})");
  Traffic traffic(client, ledger, config.run_id);
  Load load(traffic, ledger, config.run_id, config.shape);
  Settle settle(client, traffic, ledger, config.run_id, config.shape.threads);
  answer("ready run_id=" + config.run_id);

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string command;
    words >> command;
    if (command == "go") {
      int epoch = 0;
      words >> epoch;
      load.start(epoch);
      answer("going " + std::to_string(epoch));
    } else if (command == "held") {
      std::string key;
      words >> key;
      traffic.send(KeySpec{key, Mode::lease, -1, true});  // answers 409 while the dead holder's lease lasts
      answer("noted " + key);
    } else if (command == "settle" || command == "final") {
      load.stop();
      const auto started = std::chrono::steady_clock::now();
      const bool final = command == "final";
      try {
        settle.run(final ? ReplayScope::all : ReplayScope::this_round, config.resolve_deadline);
      } catch (const std::exception& e) {
        ledger.violation(std::string("the check itself failed: ") + e.what());
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const Figures f = ledger.figures();
      const std::string figures = figures_line(f, seconds);
      ledger.note(command, "{}");
      answer((final ? "final " : "settled ") + figures);
      if (final) return f.violations == 0 ? 0 : 1;
    } else if (!command.empty()) {
      answer("error unknown command: " + command);
    }
  }
  load.stop();  // the driver went away
  return ledger.figures().violations == 0 ? 0 : 1;
}

}  // namespace crash
