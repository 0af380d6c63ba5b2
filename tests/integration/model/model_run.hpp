// The model run: the driver that owns the sessions, the model's committed state and open
// transactions, and the checks; its member functions live in model_*.cpp by concern.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/model/model_calls.hpp"
#include "tests/integration/model/model_state.hpp"
#include "tests/integration/pq.hpp"

namespace idem::it::model {

using Draw = std::array<std::uint64_t, 12>;

// ---------------------------------------------------------------------------------------------

class ModelRun {
 public:
  ModelRun(const std::string& url, std::uint64_t seed, double seconds, long max_ops)
      : url_(url), seed_(seed), seconds_(seconds), max_ops_(max_ops), rng_(seed), committed_(kKeys) {}

  void run();
  std::string summary() const;
  std::string counters() const;

 private:
  // ------------------------------------------------------------------------------ set-up

  void setup();
  std::unique_ptr<Connection> open_session_connection(std::string* pid);

  Micros server_now() { return std::stoll(observer_->exec(kServerNow).text(0, "now")); }

  // ------------------------------------------------------------------------------ reporting

  std::string rel(Micros t) const;
  std::string klabel(int k) const;
  std::string describe(const Rec& r) const;
  std::string describe_key(int k) const;
  void note(const std::string& line);
  [[noreturn]] void violation(const std::string& what, int k = -1);

  // ------------------------------------------------------------------------------ model queries

  const Rec& visible(const Session& s, int k) const;

  bool owns(const Session& s, int k) const { return s.tx && s.tx->writes.count(k) > 0; }

  bool snapshot_stale(const Session& s, int k) const;
  std::string locker(const Session* s, int k, bool include_purge = true) const;
  Rec& writable(Session& s, int k);

  // ------------------------------------------------------------------------------ statements

  Reply stmt(Connection& c, const std::string& sql, const Params& params = {});
  Result must(Connection& c, const std::string& sql, const std::string& who, const Params& params = {});
  std::string txlabel(const Session& s) const;
  void commit_writes(const std::map<int, Rec>& writes);
  std::map<std::string, std::array<std::string, 3>> read_rows(Connection& c);
  void cross_check(const std::vector<int>& ks);
  void cross_check_all();

  // ------------------------------------------------------------------------------ transactions

  void begin(Session& s, Isolation iso);
  void commit(Session& s);
  void rollback(Session& s);
  void recover_after_error(Session& s);
  void savepoint(Session& s);
  void rollback_to(Session& s, std::size_t frame);
  void release_savepoint(Session& s, std::size_t frame);
  void prepare(Session& s);
  void finish_prepared(Session& s, std::size_t index, bool commit_it);

  // ------------------------------------------------------------------------------ acquire

  std::vector<Expect> base_outcomes(const Rec& v, bool own, int variant, Micros t0, Micros t1) const;
  std::vector<Expect> predict_acquire(const Session& s, int k, int variant, Micros t0, Micros t1) const;
  static std::string describe(const std::vector<Expect>& es);
  static bool matches(const Expect& e, const AcquireRow& a);
  std::string payload(int k, int variant) const;
  std::string acquire(Session& s, int k, int variant, Micros lease, Micros ttl, bool wait);
  void count_outcome(const std::string& o);
  void check_single_holder(const Session& s, int k, const AcquireRow& a, const std::string& what);
  void probe_no_lock(const Session& s, int k, const std::string& what);

  // ------------------------------------------------------------------------------ holder calls

  enum class Call { checkpoint, complete, release };
  static const char* call_name(Call c);

  struct HolderExpect {
    bool ok = false, lost = false, serial = false;
    std::string why;
  };
  HolderExpect predict_holder(const Session& s, int k, std::int64_t attempt, Micros t0, Micros t1) const;
  void holder_call(Session& s, Call c, int k, std::int64_t attempt, bool stale, const Draw& d);
  std::vector<int> holder_candidates(const Session& s, bool own_only) const;
  bool try_holder(Session& s, Call c, const Draw& d);
  void stale_call(Session& s, const Draw& d);

  // ------------------------------------------------------------------------------ purge

  void purge_step(const Draw& d);
  void purge_call(int batch);
  void apply_purge(const std::vector<int>& deleted);
  void purge_finish(bool commit_it);

  // ------------------------------------------------------------------------------ the driver

  enum class Act {
    begin,
    acquire,
    checkpoint,
    complete,
    release,
    savepoint,
    rollback_to,
    release_sp,
    commit,
    rollback,
    prepare,
    finish_prepared,
    stale,
    sleep
  };
  static Act weighted(std::uint64_t r, const std::vector<std::pair<Act, int>>& options);
  void session_step(Session& s, const Draw& d);
  void sleep(const Draw& d);

  // ------------------------------------------------------------------------------ the end

  void finish();
  std::string url_;
  std::uint64_t seed_;
  double seconds_;
  long max_ops_;
  std::mt19937_64 rng_;
  std::string extversion_;
  std::unique_ptr<Connection> observer_;
  std::unique_ptr<Connection> purge_conn_;
  std::string purge_pid_;
  bool purge_open_ = false;
  long purge_since_ = 0;
  std::set<int> purge_deleted_;
  std::vector<Session> sessions_;
  std::vector<KeyInfo> keys_;
  std::vector<Rec> committed_;
  std::map<int, std::map<int, Response>> responses_;   // committed completes by key and generation
  std::map<int, std::vector<std::int64_t>> attempts_;  // recent attempts issued per key
  std::vector<Prepared> prepared_;
  std::deque<std::string> trace_;
  Micros base_ = 0;
  std::int64_t max_attempt_ = 0;
  // The handle acquire gave each attempt (it carries that lease's secret, which a later call needs).
  std::map<std::int64_t, std::string> holder_handles_;
  long step_ = 0;
  long statements_ = 0;
  int tx_serial_ = 0;
  int sp_serial_ = 0;
  int gid_serial_ = 0;
  Clock::time_point started_ = Clock::now();
  long n_acquired_ = 0, n_resumed_ = 0, n_replay_ = 0, n_in_progress_ = 0, n_mismatch_ = 0;
  long n_lease_lost_ = 0, n_stale_ = 0, n_purged_ = 0, n_prepared_ = 0, n_commit_prepared_ = 0;
  long n_rollback_prepared_ = 0, n_serialization_ = 0, n_serialization_fresh_ = 0, n_checkpoint_ = 0;
  long n_complete_ = 0, n_release_ = 0, n_commit_ = 0, n_rollback_ = 0, n_sp_rollback_ = 0, n_wait_ = 0;
  long n_lock_probes_ = 0, n_serialization_fresh_rr_ = 0;
};

}  // namespace idem::it::model
