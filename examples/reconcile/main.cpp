// processor-reconcile: loads the payment processor's export (charges and refunds) into a table
// and asks idem.reconcile which of them the audit trail does not account for, and which recorded
// charges and refunds the processor does not know (docs/runbook.md "Reconcile with the processor").
//   processor-reconcile --processor URL --db URI [--since TIME | --hours N] [--table NAME]
// Exit status: 0 the processor and the trail agree, 1 discrepancies (listed), 2 bad arguments,
// 3 the export could not be fetched or loaded. The role connecting needs idem_auditor (or
// idem_operator) and the right to create or write the table; a bound auditor sees its tenants only.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "processor_export.hpp"

namespace {

constexpr std::int64_t kLookbackSeconds = 24 * 3600;

struct Args {
  std::string processor, db, since, table = "processor_export";
  std::string hours;  // 24 when neither it nor since is given
};

constexpr const char* kUsage =
    "usage: processor-reconcile --processor URL --db URI [--since TIME | --hours N] [--table NAME]\n"
    "  --hours N   the window: the last N hours (1 to 87600; 24 by default)\n"
    "  --since T   the window: from T (a timestamptz, not in the future) to now\n";

int usage(const std::string& why) {
  std::fprintf(stderr, "processor-reconcile: %s\n%s", why.c_str(), kUsage);
  return 2;
}

// A window of whole hours: an empty or inverted one would report "none" for anything at all.
bool valid_hours(const std::string& hours) {
  if (hours.empty() || hours.size() > 5 || hours.find_first_not_of("0123456789") != std::string::npos) return false;
  const int n = std::stoi(hours);
  return n >= 1 && n <= 87600;
}

void print_report(const pqxx::result& rows) {
  const std::vector<std::string> heads = {"kind", "object", "tenant", "resource", "client key", "recorded", "processor", "detail"};
  const std::vector<int> cols = {0, 4, 1, 2, 3, 7, 8, 11};  // idem.reconcile's columns, in the order printed
  std::vector<std::size_t> width(heads.size());
  for (std::size_t c = 0; c < heads.size(); ++c) width[c] = heads[c].size();
  const auto text = [](const pqxx::field& f) { return f.is_null() ? std::string("-") : std::string(f.c_str()); };
  for (const auto& row : rows)
    for (std::size_t c = 0; c + 1 < heads.size(); ++c) width[c] = std::max(width[c], text(row[cols[c]]).size());
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c)
      out += c + 1 == cells.size() ? cells[c] : cells[c] + std::string(width[c] - cells[c].size() + 2, ' ');
    std::printf("%s\n", out.c_str());
  };
  line(heads);
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    for (int c : cols) cells.push_back(text(row[c]));
    line(cells);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
    if (i + 1 >= argc) return usage(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--processor") a.processor = value;
    else if (arg == "--db") a.db = value;
    else if (arg == "--since") a.since = value;
    else if (arg == "--hours") a.hours = value;
    else if (arg == "--table") a.table = value;
    else return usage("unknown argument " + arg);
  }
  if (a.processor.empty()) return usage("--processor is required (the processor's base URL)");
  if (a.db.empty()) return usage("--db is required (a connection URI)");
  if (!a.since.empty() && !a.hours.empty()) return usage("--since and --hours both name the window: give one");
  if (a.since.empty() && a.hours.empty()) a.hours = "24";
  if (a.since.empty() && !valid_hours(a.hours)) return usage("--hours " + a.hours + ": a whole number of hours from 1 to 87600");

  std::string since;  // as the server shows it
  std::int64_t since_us = 0;  // exactly: microseconds since the epoch, whatever the session's TimeZone and DateStyle
  try {
    pqxx::connection db(a.db);
    {
      pqxx::nontransaction tx(db);
      try {
        const pqxx::row r = tx.exec_params1(
            "SELECT t::text, (extract(epoch FROM t) * 1000000)::bigint, t > now() FROM (SELECT " +
                std::string(a.since.empty() ? "now() - make_interval(hours => $1::int)" : "$1::timestamptz") + " AS t) s",
            a.since.empty() ? a.hours : a.since);
        since = r[0].c_str();
        since_us = r[1].as<std::int64_t>();
        if (r[2].as<bool>()) return usage("--since " + a.since + " is in the future: the window would hold nothing");
      } catch (const pqxx::sql_error& e) {
        return usage((a.since.empty() ? "--hours " + a.hours : "--since " + a.since) + ": " + e.what());
      }
    }
    // The export starts a day before the window: a charge made just before `since` by an attempt
    // that completed inside it is recorded in the window, and must be found, not reported missing.
    const std::int64_t created_gte = std::max<std::int64_t>(0, since_us / 1000000 - kLookbackSeconds);
    const reconcile::ExportCounts n = reconcile::load_export(db, a.processor, a.table, created_gte);
    std::printf("processor-reconcile: loaded %zu charges and %zu refunds (%zu pages) created since %s less a day from %s into %s\n",
                n.charges, n.refunds, n.pages, since.c_str(), a.processor.c_str(), a.table.c_str());

    pqxx::nontransaction tx(db);
    const pqxx::result rows =
        tx.exec_params("SELECT * FROM idem.reconcile($1::regclass, timestamptz 'epoch' + $2::bigint * interval '1 microsecond')",
                       a.table, since_us);
    if (rows.empty()) {
      std::printf("processor-reconcile: none: every charge and refund is accounted for, and every recorded one is at the processor\n");
      return 0;
    }
    print_report(rows);
    std::map<std::string, int> by_kind;
    for (const auto& row : rows) ++by_kind[row[0].c_str()];
    std::string kinds;
    for (const auto& [kind, count] : by_kind) kinds += (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + kind;
    std::printf("processor-reconcile: %zu discrepancies: %s (docs/runbook.md says what to do with each)\n", rows.size(),
                kinds.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "processor-reconcile: %s\n", e.what());
    return 3;
  }
}
