// One fuzzing session: a connection as one of the roles (changed every few hundred calls), calling
// random functions of schema idem with random arguments, one to three calls per transaction
// (each under a savepoint), and now and then a checked call that runs alone between two state
// digests so a refused call can be shown to have changed nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz_sql/catalog.hpp"
#include "tests/fuzz_sql/gate.hpp"
#include "tests/fuzz_sql/pools.hpp"
#include "tests/fuzz_sql/stats.hpp"
#include "tests/fuzz_sql/values.hpp"

namespace idem::fuzz_sql {

struct Options {
  std::string host = "127.0.0.1";
  std::string port = "54360";
  std::string dbname = "idem_fuzz";
  int sessions = 4;
  int seconds = 30;
  std::uint64_t seed = 0;
  int statement_timeout_ms = 5000;
  int check_interval_ms = 100;  // the least time between two checked calls (all sessions)
  std::string findings_dir;
  std::string server_log;
  std::string trace_file;

  std::string conninfo(const std::string& user) const {
    return "host=" + host + " port=" + port + " dbname=" + dbname + " user=" + user +
           " application_name=fuzz_sql connect_timeout=10";
  }
};

// What every session shares.
struct Shared {
  const Options& options;
  const Catalog& catalog;
  const std::vector<Role>& roles;
  Pools& pools;
  Stats& stats;
  Gate& gate;
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> next_check_ms{0};
};

class Session {
 public:
  Session(int index, Shared& shared);
  ~Session();
  void run();

 private:
  struct Call {
    const Function* fn = nullptr;
    std::string sql;
    std::vector<std::string> arg_names;
    std::vector<Value> args;
    bool mistyped = false;
  };
  struct Outcome {
    std::string sqlstate;  // "" when it succeeded
    std::string message;
    bool broken = false;   // the connection was lost
  };
  struct Impl;

  bool connect();
  const Function& pick_function();
  bool may_execute(const Function& fn) const;
  Call prepare(const Function& fn);
  Outcome exec(const std::string& sql, bool harvest_into, const Call* call);
  void ordinary_transaction();
  // Returns how long its two digests took (the next checked call waits ten times that).
  std::int64_t checked_call();
  void account(const Call& call, const Outcome& outcome, bool read_only);
  void lost_connection(const Call* call, const Outcome& outcome);
  std::string session_state();

  int index_;
  Shared& shared_;
  Rng rng_;
  ValueMaker values_;
  Role role_;
  int backend_pid_ = 0;
  int transactions_left_ = 0;  // before switching roles
  std::unique_ptr<Impl> impl_;
};

}  // namespace idem::fuzz_sql
