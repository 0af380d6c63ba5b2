// The crash workload's business: the request a key sends, the row its handler writes and the
// response it answers. Everything is a function of the key (and of the row's id), so any process
// (the load, the settle step, the holder that dies) builds the same request for the same key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "idem/client.hpp"

namespace crash {

// run: one transaction (client.run). lease: begin -> checkpoint("charged") -> complete(handler).
enum class Mode { run, lease };

struct KeySpec {
  std::string name;  // the Idempotency-Key
  Mode mode = Mode::run;
  int epoch = 0;        // the restart it was drawn for
  bool held = false;    // begun by a holder that died (--hold-and-die): must resume at "charged"
};

extern const char* const kTenant;
extern const char* const kChargedPoint;  // the recovery point a lease checkpoints

// The load's keys: index-th of the epoch; a third of them take the multi-step path.
KeySpec pool_key(const std::string& run_id, int epoch, int index);

idem::Request request_for(const KeySpec& key);
// The same key with another body: must be answered 422 and run nothing.
idem::Request mismatched_request_for(const KeySpec& key);

// What the lease checkpoints after "charging": {"charge_id": ...}, a function of the key.
std::string charge_data(const KeySpec& key);
// recovery_data as the server returns it (jsonb text) is the same JSON document as charge_data.
bool is_charge_data(const KeySpec& key, const std::optional<std::string>& recovery_data);

// The handler: the business write inside the attempt's transaction (no UNIQUE on the key, so a
// second execution shows as a second row), the audit fields for idem.double_charges, and
// response_for the new row. charged_here: this attempt "called the processor" (false for a
// lease resumed at "charged", which must not charge again).
idem::Response execute_order(idem::Attempt& attempt, const KeySpec& key, const std::string& run_id,
                             bool charged_here);
// The handler's response for the row `order_seq`: status, ordered and repeated headers (one
// non-ASCII), a body with binary bytes (NUL, 0xff) derived from the key.
idem::Response response_for(const KeySpec& key, std::int64_t order_seq);
// The row id a response names (its Location header), nullopt when it names none.
std::optional<std::int64_t> order_seq_of(const idem::Response& response);

std::vector<std::string> create_table_sql();

}  // namespace crash
