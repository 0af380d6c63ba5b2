// The workload's own record of what the server acknowledged: key -> the exact response (status,
// headers, body) of the first normal answer, every failure (in-doubt, connection lost, pool
// timeout) that leaves a key unresolved until a retry gets its result, the figures, and every
// violation. Kept in memory and appended to a file (one JSON object a line). Thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "idem/client.hpp"
#include "orders.hpp"

namespace crash {

// Why a request ended without an answer. Each leaves the key unresolved until a retry answers.
enum class Failure { outcome_unknown, connection_lost, pool_timeout, lease_lost, database_error, other };
const char* failure_name(Failure f);

struct Figures {
  std::uint64_t requests = 0;
  std::uint64_t executions = 0;  // answers the handler produced in that very call
  std::uint64_t replays = 0;     // answers replayed from the store
  std::uint64_t in_progress = 0;
  std::uint64_t mismatches_refused = 0;  // 422 to a changed body, nothing run
  std::uint64_t failures[6] = {};        // by Failure
  std::uint64_t acknowledged = 0;        // answers compared with the key's first (executions + replays)
  std::uint64_t keys_acknowledged = 0;
  std::uint64_t unresolved_resolved = 0;  // keys that failed before their result, resolved since
  std::uint64_t in_doubt_resolved = 0;    // of those, keys whose failure was OutcomeUnknown
  std::uint64_t in_doubt_committed = 0;   // ... whose retry was a replay: that COMMIT had landed
  std::uint64_t holders_resumed = 0;      // held keys resumed at "charged" after their holder died
  std::uint64_t lease_resumes = 0;        // other leases resumed at "charged" (left by a kill)
  std::uint64_t replays_verified = 0;     // settle's replays of acknowledged keys, byte for byte
  std::uint64_t rows_checked = 0;         // acknowledged keys whose single business row was checked
  std::uint64_t double_executions = 0;
  std::uint64_t violations = 0;
};

struct Acknowledged {
  KeySpec key;
  idem::Response response;  // without replay headers
  std::int64_t order_seq = 0;
};

class Ledger {
 public:
  explicit Ledger(const std::string& path);  // appends; throws when it cannot open the file
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // A request for the key is about to be sent: until its result arrives the key is open.
  void touch(const KeySpec& key);
  void failed(const KeySpec& key, Failure why, const std::string& what);
  void in_progress();
  void mismatch_refused();
  // A normal answer carrying the key's result (executed now or replayed). Checked against the
  // handler's response for the row it names, and against the key's first acknowledged answer.
  void acknowledged(const KeySpec& key, const idem::Response& answer);
  void violation(const std::string& what);
  void double_execution(const std::string& what);
  void replay_verified();
  void rows_checked(std::uint64_t n);

  // A held key (its holder died holding the lease) is checked once, at its first lease; counted
  // when that lease resumed at "charged".
  bool holder_checked(const std::string& key) const;
  void holder_checked(const KeySpec& key, bool resumed_at_charged);
  void lease_resumed(const KeySpec& key);

  std::vector<KeySpec> open_keys() const;
  std::optional<KeySpec> some_acknowledged(std::uint64_t random) const;
  std::vector<Acknowledged> all_acknowledged() const;
  // Keys acknowledged since the last next_round() (settle replays those, then starts a round).
  std::vector<Acknowledged> acknowledged_this_round() const;
  void next_round();

  Figures figures() const;
  // A line of the file: {"event": ..., ...fields}.
  void note(const std::string& event, const std::string& fields_json_object);

 private:
  struct Entry {
    KeySpec key;
    std::optional<Acknowledged> result;
    bool failed = false;
    bool in_doubt = false;
    bool holder_checked = false;
    int acknowledged_round = -1;
  };
  Entry& entry(const KeySpec& key);
  void write_line(const std::string& line);

  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> acknowledged_names_;
  Figures figures_;
  int round_ = 0;
  std::FILE* file_ = nullptr;
};

}  // namespace crash
