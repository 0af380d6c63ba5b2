// Real values the sessions got back from the server (handles and fencing tokens from acquire,
// event ids and claim tokens from emit/claim, names that were registered), shared by all sessions
// so each one passes the others' handles, tenants and tokens: the hostile inputs that look valid.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/split_mix64.hpp"

namespace idem::fuzz_sql {

using Rng = idem::testing::SplitMix64;

class Pools {
 public:
  // kind: "handle", "attempt", "tenant", "key", "topic", "consumer", "event_id", "token",
  // "order_id", "digest" (bytea as hex). Each kind keeps the newest few hundred values.
  void add(const std::string& kind, const std::string& value);
  std::optional<std::string> pick(const std::string& kind, Rng& rng) const;

  // A lease holder as acquire answered it: passing both is the one valid checkpoint/complete.
  struct Holder {
    std::string handle;
    std::string attempt;
  };
  void add_holder(Holder holder);
  std::optional<Holder> pick_holder(Rng& rng) const;

 private:
  static constexpr std::size_t kCapacity = 256;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, std::size_t> next_;  // ring position per kind
  std::vector<Holder> holders_;
  std::size_t next_holder_ = 0;
};

}  // namespace idem::fuzz_sql
