// fuzz_sql: calls every function of schema idem from several sessions with hostile arguments on
// a throwaway cluster (scripts/fuzz-sql.sh starts it), and fails on a server crash, an internal
// error, an SQLSTATE that is neither ours nor allowed, or a refused call that changed the store.
// usage: fuzz_sql --port=P [--host=H] [--dbname=D] [--sessions=N] [--seconds=S] [--seed=N]
//                 [--findings-dir=DIR] [--server-log=FILE]
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include <pqxx/pqxx>

#include "tests/fuzz_sql/catalog.hpp"
#include "tests/fuzz_sql/inspector.hpp"
#include "tests/fuzz_sql/report.hpp"
#include "tests/fuzz_sql/session.hpp"

namespace idem::fuzz_sql {
namespace {

// The login roles scripts/fuzz-sql.sh creates, one in each group the extension defines, and the
// superuser.
const std::vector<Role> kRoles = {
    {"fuzz_service", "idem_service", false},
    {"fuzz_consumer", "idem_consumer", false},
    {"fuzz_operator", "idem_operator", false},
    {"fuzz_auditor", "idem_auditor", false},
    {"postgres", "", true},
};

Options parse(int argc, char** argv) {
  Options o;
  o.seed = std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--host") o.host = value;
    else if (key == "--port") o.port = value;
    else if (key == "--dbname") o.dbname = value;
    else if (key == "--sessions") o.sessions = std::stoi(value);
    else if (key == "--seconds") o.seconds = std::stoi(value);
    else if (key == "--seed") o.seed = std::stoull(value);
    else if (key == "--findings-dir") o.findings_dir = value;
    else if (key == "--server-log") o.server_log = value;
    else if (key == "--trace") o.trace_file = value;
    else {
      std::cerr << "fuzz_sql: unknown option " << a << "\n";
      std::exit(2);
    }
  }
  return o;
}

int run(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const Catalog catalog = load_catalog(options.conninfo("postgres"), kRoles);
  std::cout << "fuzz-sql: seed " << options.seed << ", " << catalog.functions.size() << " functions in schema idem, "
            << catalog.tables.size() << " tables, " << options.sessions << " sessions, " << options.seconds << " s\n";
  Stats stats(options.findings_dir);
  if (!options.trace_file.empty()) stats.open_trace(options.trace_file);
  // A service must be refused every internal function (docs/sql-api.md: "Not granted to anyone but
  // the owner"); other roles' grants of internal functions are reported for the record.
  for (const auto& fn : catalog.functions) {
    if (!fn.internal()) continue;
    for (const auto& user : fn.executors) {
      if (user == "postgres") continue;
      if (user == "fuzz_service") {
        Finding f;
        f.kind = "privilege";
        f.function = fn.signature;
        f.role = user;
        f.why = "an internal function is executable by idem_service";
        stats.finding(f, "");
      } else {
        std::cout << "fuzz-sql: note: internal " << fn.signature << " is executable by " << user << "\n";
      }
    }
  }
  Pools pools;
  {
    pqxx::connection conn(options.conninfo("postgres"));
    pqxx::nontransaction tx(conn);
    for (const auto& r : tx.exec("SELECT topic FROM idem.outbox_topics")) pools.add("topic", r[0].c_str());
    for (const auto& r : tx.exec("SELECT consumer FROM idem.outbox_consumers")) pools.add("consumer", r[0].c_str());
  }
  Inspector inspector(options.conninfo("postgres"), catalog.tables);
  const std::string started = inspector.postmaster_start_time();

  Gate gate;
  Shared shared{options, catalog, kRoles, pools, stats, gate};
  std::vector<std::thread> threads;
  for (int i = 0; i < options.sessions; ++i) {
    threads.emplace_back([&shared, i] {
      try {
        Session(i, shared).run();
      } catch (const std::exception& e) {
        std::cerr << "fuzz-sql: session " << i << " stopped: " << e.what() << "\n";
        shared.stop = true;
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(options.seconds);
  auto next_report = start + std::chrono::seconds(10);
  while (!shared.stop && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (std::chrono::steady_clock::now() >= next_report) {
      next_report += std::chrono::seconds(10);
      const auto t = stats.totals();
      const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
      std::cout << "fuzz-sql: " << elapsed.count() << " s: " << t.calls << " calls (" << classes(t) << "); "
                << t.crashes << " lost connections, " << t.internal << " XX000, " << t.unexpected << " unexpected, "
                << t.state_changed << " state changes in " << t.checked_refusals << " checked refusals\n"
                << std::flush;
    }
  }
  const bool stopped_early = shared.stop.exchange(true);
  for (auto& t : threads) t.join();
  const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);

  print_histogram(stats);
  std::uint64_t crashes = 0;
  std::string restarted;
  try {
    Inspector after(options.conninfo("postgres"), catalog.tables);
    if (after.postmaster_start_time() != started) {
      restarted = "the postmaster restarted (" + started + " -> " + after.postmaster_start_time() + ")";
    }
  } catch (const std::exception& e) {
    restarted = std::string("the server does not answer after the run: ") + e.what();
  }
  if (!restarted.empty()) {
    std::cout << "fuzz-sql: " << restarted << "\n";
    ++crashes;
  }
  if (!options.server_log.empty()) {
    const auto lines = crash_lines(options.server_log);
    for (std::size_t i = 0; i < lines.size() && i < 20; ++i) std::cout << "fuzz-sql: server log: " << lines[i] << "\n";
    crashes = std::max<std::uint64_t>(crashes, lines.size());
  }
  const auto t = stats.totals();
  if (crashes == 0 && t.crashes > 0) crashes = 1;  // lost connections the log does not explain
  print_findings(stats, options.server_log.empty() ? std::vector<std::string>{} : crash_lines(options.server_log));
  std::size_t called = 0;
  const auto per_function = stats.per_function();
  for (const auto& fn : catalog.functions) {
    if (per_function.count(fn.signature)) {
      ++called;
    } else {
      std::cout << "fuzz-sql: never called: " << fn.signature << "\n";
    }
  }
  if (t.hook_internal > 0) {
    std::cout << "fuzz-sql: " << t.hook_internal
              << " ERR_INTERNAL from the test hooks _raise/_boundary_probe called as superuser (by design, not counted)\n";
  }
  std::cout << "fuzz-sql: " << t.calls << " calls of " << called << " functions from " << options.sessions << " sessions in "
            << elapsed.count() << " s: " << crashes << " crashes, " << t.internal << " XX000, " << t.unexpected
            << " unexpected errors, " << t.state_changed << " refused calls that changed state (of "
            << t.checked_refusals << " checked)" << (t.privilege ? ", " + std::to_string(t.privilege) + " privilege findings" : "")
            << "\n";
  const bool failed = crashes || t.internal || t.unexpected || t.state_changed || t.privilege ||
                      (stopped_early && elapsed.count() + 2 < options.seconds);
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace idem::fuzz_sql

int main(int argc, char** argv) {
  try {
    return idem::fuzz_sql::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "fuzz_sql: " << e.what() << "\n";
    return 2;
  }
}
