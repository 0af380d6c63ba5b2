// What the sessions saw: calls and SQLSTATEs per function, findings with the call that caused
// them (the first few of each kind in full), crashes and refused calls that changed state.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace idem::fuzz_sql {

struct Finding {
  std::string kind;       // "XX000", "unexpected", "crash", "state changed", "privilege"
  std::string function;   // signature
  std::string role;
  std::string sqlstate;
  std::string message;
  std::string why;
  std::string call;       // the statement, long arguments clipped
  std::string sql_file;   // the whole statement, written for a replay with psql
};

class Stats {
 public:
  explicit Stats(std::string findings_dir) : findings_dir_(std::move(findings_dir)) {}

  // --trace=FILE: every statement of every session, clipped, with its outcome (for debugging).
  void open_trace(const std::string& path);
  void trace(int session, const std::string& sql, const std::string& outcome);

  // sqlstate "" is a call that succeeded.
  void record(const std::string& function, const std::string& sqlstate);
  void hook_internal() { add_counter("hook_internal"); }
  void checked_refusal() { add_counter("checked_refusals"); }
  // Keeps the first few findings of each (kind, function, SQLSTATE) with their statements.
  void finding(Finding f, const std::string& full_sql);

  struct Totals {
    std::uint64_t calls = 0, ok = 0, crashes = 0, internal = 0, unexpected = 0, state_changed = 0,
                  checked_refusals = 0, hook_internal = 0, privilege = 0;
    std::map<std::string, std::uint64_t> by_class;  // SQLSTATE class ("IK", "22", ...)
  };
  Totals totals() const;
  std::map<std::string, std::map<std::string, std::uint64_t>> per_function() const;
  std::vector<Finding> findings() const;

 private:
  void add_counter(const std::string& name);
  mutable std::mutex mutex_;
  std::string findings_dir_;
  std::map<std::string, std::map<std::string, std::uint64_t>> per_function_;  // "" = ok
  std::map<std::string, std::uint64_t> counters_;
  std::map<std::string, std::uint64_t> finding_counts_;  // per (kind, function, SQLSTATE)
  std::vector<Finding> findings_;
  std::unique_ptr<std::ofstream> trace_;
};

// `text` safe for a terminal: control characters and bytes that are not UTF-8 as \xNN.
std::string printable(const std::string& text);

// `sql` with every long string literal clipped to its head and length, for reports.
std::string clip_sql(const std::string& sql, std::size_t max_literal = 120);

}  // namespace idem::fuzz_sql
