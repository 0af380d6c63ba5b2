// What the run prints: the progress line's error classes, the SQLSTATE histogram per function,
// the findings with their statements, and the server log's lines about crashed backends.
#pragma once

#include <string>
#include <vector>

#include "tests/fuzz_sql/stats.hpp"

namespace idem::fuzz_sql {

// "ok 123, 22 45, IK 67": the outcomes by SQLSTATE class.
std::string classes(const Stats::Totals& totals);
// Lines of the server log that mean a backend died: "server process (PID n) was terminated by
// signal 11", "... exited with exit code 2", "... was terminated by exception", PANIC.
std::vector<std::string> crash_lines(const std::string& server_log);
void print_histogram(const Stats& stats);
// Marks the crash finding whose backend the log names: the statement that crashed the server.
void print_findings(const Stats& stats, const std::vector<std::string>& crash_log);

}  // namespace idem::fuzz_sql
