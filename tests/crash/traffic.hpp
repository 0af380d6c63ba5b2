// One request of the crash workload against the server, judged into the ledger: the key's own
// request by its mode (client.run, or begin -> checkpoint -> complete), a changed body that must
// be refused, and the replay check of an acknowledged key.
#pragma once

#include <string>

#include "idem/client.hpp"
#include "ledger.hpp"
#include "orders.hpp"

namespace crash {

enum class Answer {
  result,       // the key's result (executed or replayed), or a violation already recorded
  in_progress,  // 409: another attempt holds the key
  failed,       // no answer (the server is down, the outcome is unknown, ...): retry later
};

class Traffic {
 public:
  Traffic(idem::Client& client, Ledger& ledger, std::string run_id)
      : client_(client), ledger_(ledger), run_id_(std::move(run_id)) {}

  Answer send(const KeySpec& key);
  // The key's request with another body: an acknowledged key must answer 422 and run nothing.
  Answer probe_mismatch(const KeySpec& key);
  // The key's request again: must replay `first` byte for byte, plus the replay headers.
  Answer verify_replay(const Acknowledged& first);

 private:
  Answer send_run(const KeySpec& key);
  Answer send_lease(const KeySpec& key);
  Answer judge(const KeySpec& key, const idem::Response& answer);
  // Runs f, turning the client's exceptions into a failure of the key.
  template <typename F>
  Answer guarded(const KeySpec& key, F&& f);

  idem::Client& client_;
  Ledger& ledger_;
  std::string run_id_;
};

}  // namespace crash
