// The run's report, on stdout.
#include "tests/fuzz_sql/report.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

namespace idem::fuzz_sql {

std::string classes(const Stats::Totals& t) {
  std::ostringstream s;
  s << "ok " << t.ok;
  for (const auto& [cls, n] : t.by_class) s << ", " << cls << " " << n;
  return s.str();
}

std::vector<std::string> crash_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("terminated by signal") != std::string::npos ||
        line.find("was terminated by exception") != std::string::npos ||
        (line.find("server process (PID") != std::string::npos && line.find("exited with exit code") != std::string::npos) ||
        line.find("PANIC:") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

void print_histogram(const Stats& stats) {
  std::cout << "fuzz-sql: SQLSTATEs per function (calls: ok, then each SQLSTATE):\n";
  for (const auto& [fn, states] : stats.per_function()) {
    std::uint64_t total = 0;
    for (const auto& [s, n] : states) total += n;
    std::cout << "  " << fn << "  " << total << ":";
    const auto ok = states.find("");
    std::cout << " ok " << (ok == states.end() ? 0 : ok->second);
    for (const auto& [s, n] : states) {
      if (!s.empty()) std::cout << ", " << s << " " << n;
    }
    std::cout << "\n";
  }
}

void print_findings(const Stats& stats, const std::vector<std::string>& crash_log) {
  std::vector<std::string> crashed_pids;  // "(PID 123)" of each crash line
  {
    for (const auto& line : crash_log) {
      const auto at = line.find("(PID ");
      if (at != std::string::npos) crashed_pids.push_back(line.substr(at + 5, line.find(')', at) - at - 5));
    }
  }
  for (const auto& f : stats.findings()) {
    // A crash takes every session's connection; the one whose backend died ran the culprit.
    bool culprit = false;
    for (const auto& pid : crashed_pids) culprit |= f.kind == "crash" && f.role.find("pid " + pid + ")") != std::string::npos;
    std::cout << "fuzz-sql: FINDING " << f.kind << (culprit ? " (THIS BACKEND CRASHED)" : "") << " in " << f.function
              << " as " << f.role << ": "
              << (f.sqlstate.empty() ? "" : f.sqlstate + " ") << printable(f.message)
              << (f.why.empty() ? "" : " [" + printable(f.why) + "]")
              << "\n";
    if (!f.call.empty()) std::cout << "    " << f.call << "\n";
    if (!f.sql_file.empty()) std::cout << "    replay: psql -f " << f.sql_file << "\n";
  }
}

}  // namespace idem::fuzz_sql
