// The outside view of the store for checked calls, and the postmaster's start time.
#include "tests/fuzz_sql/inspector.hpp"

#include <pqxx/pqxx>

namespace idem::fuzz_sql {

struct Inspector::Impl {
  explicit Impl(const std::string& conninfo) : conn(conninfo) {}
  pqxx::connection conn;
  std::string digest_sql;
};

Inspector::Inspector(const std::string& conninfo, const std::vector<std::string>& tables)
    : impl_(std::make_unique<Impl>(conninfo)) {
  std::string sql;
  for (const auto& table : tables) {
    // count + newest xmin: an insert or delete changes the count, an update (and an insert after a
    // delete) leaves a row version with a newer xmin; cheap enough to take several times a second.
    sql += (sql.empty() ? "" : " UNION ALL ") + std::string("SELECT '") + table +
           "', count(*)::text || '/' || coalesce(max(xmin::text::bigint), 0)::text FROM " + table;
  }
  sql += " UNION ALL SELECT 'pg_prepared_xacts', count(*)::text FROM pg_prepared_xacts";
  impl_->digest_sql = sql;
}

Inspector::~Inspector() = default;

std::map<std::string, std::string> Inspector::digest() {
  pqxx::nontransaction tx(impl_->conn);
  std::map<std::string, std::string> parts;
  for (const auto& row : tx.exec(impl_->digest_sql)) parts[row[0].as<std::string>()] = row[1].as<std::string>();
  return parts;
}

std::vector<std::string> Inspector::locks_of(int pid) {
  pqxx::nontransaction tx(impl_->conn);
  std::vector<std::string> locks;
  for (const auto& row : tx.exec_params(
           "SELECT locktype || ' ' || mode || coalesce(' ' || objid::text, '') FROM pg_locks WHERE pid = $1", pid)) {
    locks.push_back(row[0].as<std::string>());
  }
  return locks;
}

std::string Inspector::postmaster_start_time() {
  pqxx::nontransaction tx(impl_->conn);
  return tx.exec1("SELECT pg_postmaster_start_time()::text")[0].as<std::string>();
}

std::vector<std::string> digest_changes(const std::map<std::string, std::string>& before,
                                        const std::map<std::string, std::string>& after) {
  std::vector<std::string> changes;
  for (const auto& [part, value] : after) {
    const auto it = before.find(part);
    const std::string old = it == before.end() ? "(absent)" : it->second;
    if (old != value) changes.push_back(part + ": " + old + " -> " + value);
  }
  return changes;
}

}  // namespace idem::fuzz_sql
