// What the failover workload sends for one idempotency key and what its handler answers: the
// request (fixed per key, so every retry is the same request), the response bytes, and the
// comparison of an acknowledged response with a replay of it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "idem/client.hpp"

namespace idem::failover {

// run: one client.run transaction. lease: client.begin, checkpoints, lease.complete.
enum class Kind { run, lease };
const char* kind_name(Kind kind);
Kind kind_of(const std::string& name);  // throws std::invalid_argument

struct KeySpec {
  std::string key;   // the Idempotency-Key
  Kind kind = Kind::run;
  std::string body;  // the request body, the same bytes for every request with the key
  int round = 0;     // the failover round that created it
};

// A fresh key for `round` (random, so rounds and runs never collide).
KeySpec new_key(int round, Kind kind);
Request request_of(const KeySpec& spec);

// The business table the handlers write, one row per execution, in the transaction that records
// the response. No unique constraint: a second execution of a key shows up as a second row.
extern const char* const kExecutionsTable;
extern const char* const kInsertExecution;  // $1 key, $2 kind, $3 exec_id, $4 round

// A random id naming one execution of a handler; it travels in the response (X-Execution-Id), so
// a replay proves which execution it replays.
std::string new_execution_id();
// The handler's response: binary body bytes (NUL, 0xFF, CR LF), ordered and repeated headers.
Response response_for(const KeySpec& spec, const std::string& execution_id, const std::string& charge_id);

// A response as the caller got it, replay markers (X-Cache-Lookup, Idempotent-Replayed) removed,
// so the handler's answer and every replay of it compare equal byte for byte.
struct Answer {
  int status = 0;
  std::vector<Header> headers;
  std::string body;
  bool operator==(const Answer& o) const { return status == o.status && headers == o.headers && body == o.body; }
  bool operator!=(const Answer& o) const { return !(*this == o); }
  std::string execution_id() const;  // X-Execution-Id, "" when absent
};
// replayed: the response carried the client's replay markers.
Answer answer_of(const Response& response, bool* replayed = nullptr);

std::string to_hex(const std::string& bytes);
std::string from_hex(const std::string& hex);  // throws std::invalid_argument

}  // namespace idem::failover
