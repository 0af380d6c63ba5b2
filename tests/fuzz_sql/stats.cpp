// Counters behind one mutex: a call costs a round trip, so locking per call is cheap enough.
#include "tests/fuzz_sql/stats.hpp"

#include <fstream>

namespace idem::fuzz_sql {

void Stats::record(const std::string& function, const std::string& sqlstate) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++per_function_[function][sqlstate];
}

void Stats::add_counter(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_[name];
}

void Stats::finding(Finding f, const std::string& full_sql) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_[f.kind];
  const std::string id = f.kind + "|" + f.function + "|" + f.sqlstate;
  if (++finding_counts_[id] > 3) return;  // the first three of a kind tell the story
  if (!findings_dir_.empty()) {
    f.sql_file = findings_dir_ + "/finding-" + std::to_string(findings_.size() + 1) + ".sql";
    std::ofstream out(f.sql_file, std::ios::binary);
    out << "-- " << f.kind << " as " << f.role << ": " << f.function << " -> " << f.sqlstate << " "
        << f.message.substr(0, f.message.find('\n')) << "\n"
        << full_sql << ";\n";
  }
  findings_.push_back(std::move(f));
}

Stats::Totals Stats::totals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Totals t;
  for (const auto& [fn, states] : per_function_) {
    for (const auto& [state, n] : states) {
      t.calls += n;
      if (state.empty()) {
        t.ok += n;
      } else {
        t.by_class[state.substr(0, 2)] += n;
      }
    }
  }
  auto counter = [&](const char* name) {
    const auto it = counters_.find(name);
    return it == counters_.end() ? 0 : it->second;
  };
  t.crashes = counter("crash");
  t.internal = counter("XX000");
  t.unexpected = counter("unexpected");
  t.state_changed = counter("state changed");
  t.privilege = counter("privilege");
  t.checked_refusals = counter("checked_refusals");
  t.hook_internal = counter("hook_internal");
  return t;
}

std::map<std::string, std::map<std::string, std::uint64_t>> Stats::per_function() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return per_function_;
}

std::vector<Finding> Stats::findings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return findings_;
}

void Stats::open_trace(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  trace_ = std::make_unique<std::ofstream>(path, std::ios::binary);
}

void Stats::trace(int session, const std::string& sql, const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (trace_) *trace_ << session << " " << clip_sql(sql, 60) << " -> " << outcome << "\n";
}

std::string printable(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  auto escape = [&](unsigned char c) { out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15]; };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (!ok || (n == 1 && (c < 0x20 || c == 0x7F))) {
      escape(c);
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

std::string clip_sql(const std::string& sql, std::size_t max_literal) {
  std::string out;
  std::size_t i = 0;
  while (i < sql.size()) {
    if (sql[i] != '\'') {
      out += sql[i++];
      continue;
    }
    // A literal runs to the next quote not doubled.
    std::size_t j = i + 1;
    while (j < sql.size() && !(sql[j] == '\'' && (j + 1 >= sql.size() || sql[j + 1] != '\''))) {
      j += sql[j] == '\'' ? 2 : 1;
    }
    const std::size_t length = j - i - 1;
    if (length <= max_literal) {
      out.append(sql, i, length + 2);
    } else {
      out.append(sql, i, max_literal / 2 + 1);
      out += "...(" + std::to_string(length) + " bytes)...";
      out.append(sql, j - max_literal / 4, max_literal / 4 + 1);
    }
    i = j + 1;
  }
  return printable(out);
}

}  // namespace idem::fuzz_sql
