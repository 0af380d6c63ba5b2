// The model's state: a key's record (Rec), sessions, transactions and their savepoints,
// prepared transactions and the keys under test, plus the run's constants.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/pq.hpp"

namespace idem::it::model {

using Clock = std::chrono::steady_clock;
using Micros = std::int64_t;  // server time, microseconds since the Unix epoch

inline constexpr Micros kNever = std::numeric_limits<Micros>::max() / 4;
inline constexpr Micros kSlack = 2000;  // a boundary this close to a call's window accepts either answer
inline constexpr int kSessions = 6;
inline constexpr int kKeyNames = 6;
inline constexpr int kKeys = kKeyNames * 2;  // each name under two tenants: 12 records
inline constexpr int kVariants = 3;
inline constexpr int kMaxPrepared = 3;       // max_prepared_transactions is 10 on the test cluster
inline constexpr int kMaxTxSteps = 12;       // a transaction this old is committed or rolled back
inline constexpr int kMaxPurgeTxSteps = 25;  // global steps a purge transaction may stay open
inline constexpr std::int64_t kStaleOffset = 1000000000;
inline constexpr Micros kWaitTimeout = 200 * 1000;  // SET idem.wait_timeout in every session
inline constexpr double kNoWaitSeconds = 1.0;       // a call that must not wait, taking longer, waited
inline constexpr double kDefaultSeconds = 20;
inline const Micros kLeases[] = {150000, 300000, 1000000, 2000000};
inline const Micros kTtls[] = {150000, 400000, 1500000};

// ---------------------------------------------------------------------------------------------
// The model of one key's record.

enum class St { in_progress, resolved, released };

inline const char* st_name(St s) {
  switch (s) {
    case St::in_progress:
      return "in_progress";
    case St::resolved:
      return "resolved";
    case St::released:
      return "released";
  }
  return "?";
}

struct Response {
  int status = 0;
  std::string headers;  // jsonb's text form
  std::string body;     // raw bytes
  std::optional<std::string> order_id;
  bool operator==(const Response& o) const {
    return status == o.status && headers == o.headers && body == o.body && order_id == o.order_id;
  }
};

struct Rec {
  bool exists = false;
  St status = St::in_progress;
  std::int64_t attempt = 0;
  int gen = 0;
  int variant = -1;
  Micros lease = 0, ttl = 0;      // of the grant that created, restarted or took over the record
  Micros lease_end = 0;           // in_progress: the lease expiry (acquire or last checkpoint)
  Micros end_lo = 0, end_hi = 0;  // resolved/released: the window of the complete/release call
  bool checkpointed = false;
  bool pinned = false;  // a release of this generation did not say the handler was not called
  std::optional<std::string> rp, rdata;
  Response resp;
  int hwm = 0;            // the highest committed generation of the key, kept across purge
  std::uint64_t ver = 0;  // bumped by every committed change (snapshot staleness)
};

struct Window {
  Micros lo, hi;
};

// When the record becomes history (bounds: the complete/release time is known to a window).
inline Window history_at(const Rec& r) {
  if (!r.exists) return {kNever, kNever};
  switch (r.status) {
    case St::in_progress:
      if (r.checkpointed) return {kNever, kNever};
      return {r.lease_end + r.ttl, r.lease_end + r.ttl};
    case St::resolved:
      return {r.end_lo + r.ttl, r.end_hi + r.ttl};
    case St::released:
      if (r.checkpointed) return {kNever, kNever};
      return {r.end_lo + r.ttl, r.end_hi + r.ttl};
  }
  return {kNever, kNever};
}

// ---------------------------------------------------------------------------------------------
// Sessions, transactions, prepared transactions.

struct Frame {
  std::string name;
  std::map<int, Rec> writes;  // the overlay when the savepoint was set
};

struct Tx {
  int serial = 0;
  Isolation iso = Isolation::read_committed;
  bool block = true;                         // false: a single autocommit statement
  std::map<int, Rec> writes;                 // what this transaction wrote (it holds these keys)
  std::optional<std::vector<Rec>> snapshot;  // REPEATABLE READ / SERIALIZABLE: committed state then
  std::vector<Frame> frames;
  int steps = 0;
};

struct Session {
  std::string name;
  std::unique_ptr<Connection> conn;
  std::string pid;
  std::optional<Tx> tx;
};

struct Prepared {
  std::string gid;
  std::string from;
  Tx tx;
};

struct KeyInfo {
  std::string tenant;
  std::string name;
  std::string digest_hex;
  std::string handle;
  std::string lock_key;
};

inline const char* iso_short(Isolation i) {
  switch (i) {
    case Isolation::read_committed:
      return "RC";
    case Isolation::repeatable_read:
      return "RR";
    case Isolation::serializable:
      return "SER";
  }
  return "?";
}

}  // namespace idem::it::model
