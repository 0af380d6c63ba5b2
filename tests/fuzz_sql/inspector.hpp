// A superuser connection that looks at the store from outside a session: a digest of every table
// of schema idem (row count and newest row version, so an insert, update or delete shows), the
// prepared transactions, and the locks a session still holds after its transaction ended.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace idem::fuzz_sql {

class Inspector {
 public:
  Inspector(const std::string& conninfo, const std::vector<std::string>& tables);
  ~Inspector();

  // part -> value; sequences are left out on purpose: nextval is not transactional, and a fencing
  // token is never issued twice, also after a rollback (docs/sql-api.md), so a refused acquire may
  // advance idem.fencing_token_seq.
  std::map<std::string, std::string> digest();
  // Locks held by backend `pid` (none, once its transaction ended).
  std::vector<std::string> locks_of(int pid);
  std::string postmaster_start_time();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The parts that differ, as "part: before -> after".
std::vector<std::string> digest_changes(const std::map<std::string, std::string>& before,
                                        const std::map<std::string, std::string>& after);

}  // namespace idem::fuzz_sql
