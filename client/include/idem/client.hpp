// idem::Client: makes a service handler exactly-once under an Idempotency-Key. run() acquires the
// key, calls the handler in the same transaction, completes and commits; every other outcome
// becomes its HTTP answer (replay, 409 + Retry-After, 422, 400 problem+json). docs/client.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "idem/errors.hpp"
#include "idem/types.hpp"

namespace idem {

// What a service has in hand for one HTTP request.
struct Request {
  std::string tenant;
  std::string caller;  // the calling service or client id
  std::string method;  // POST
  std::string route;   // /v1/payments
  std::optional<std::string> idempotency_key;  // the Idempotency-Key header, if sent
  std::string body;                             // JSON bytes; empty means "no body"
  std::vector<std::string> fingerprint_exclusions;  // RFC 6901 pointers, e.g. /metadata/trace_id
  std::string mutation_type = "create";             // the audit's kind: create, capture, refund, void
  // Who the key belongs to. tenant (default): the same key from another caller or on another
  // route is refused, 422 ERR_IDEMPOTENCY_KEY_REUSED. route: it is another request (a client that
  // reuses a key across routes then executes twice, unseen); opt in per route, knowingly.
  enum class KeyScope { tenant, route };
  KeyScope key_scope = KeyScope::tenant;
  // A reused key with another body answers 422 naming the JSON pointers that differ
  // ("differs": ["/amount_cents"]), from salted digests of the first body's members kept with
  // the record, never the values. false: none are kept for this request's key, nor named.
  bool name_differing_fields = true;
  std::string resource() const { return method + " " + route; }
};

// What the completion adds to the audit trail (idem.mutations; idem.double_charges reads it).
struct Audit {
  std::optional<std::string> order_id;
  std::optional<std::string> handler_response;  // JSON object, e.g. {"charge_id":"ch_1"}
  std::optional<std::string> local_status;      // e.g. paid, refunded
  bool handler_called = true;                   // whether the processor was called for this result
};


// The handler's view of its attempt: the open transaction and what acquire said.
class Attempt {
 public:
  // One statement with $n parameters in the attempt's transaction; rows as text.
  std::vector<SqlRow> exec(const std::string& sql, const std::vector<SqlValue>& params = {});
  // idem.emit(tenant, topic, payload, key) in the same transaction: the event exists iff it commits.
  std::int64_t emit(const std::string& topic, const std::string& payload_json,
                    const std::optional<std::string>& key = std::nullopt);
  // The key to send to a payment processor, the same for every attempt of this generation; it
  // comes with the lease (no round trip). Throws InvalidArgument without a key.
  const std::string& handler_key();
  // The audit fields the completion records (no round trip: they ride with complete).
  void record(const Audit& audit);

  bool idempotent() const noexcept;  // false: no key, allow_missing_key let it through
  bool resumed() const noexcept;     // a takeover of unfinished work
  const std::optional<std::string>& recovery_point() const noexcept;
  const std::optional<std::string>& recovery_data() const noexcept;  // JSON text
  const std::string& handle() const noexcept;
  std::int64_t fencing_token() const noexcept;
  const Request& request() const noexcept;

  struct State;
  explicit Attempt(State& state) : state_(state) {}
  Attempt(const Attempt&) = delete;
  Attempt& operator=(const Attempt&) = delete;

 private:
  State& state_;
};

struct ClientStats {
  std::uint64_t connections_opened = 0;
  std::uint64_t connections_discarded = 0;  // returned broken, replaced on demand
  std::uint64_t round_trips = 0;  // exchanges waited for (BEGIN+acquire, each exec, complete+COMMIT, ...)
  std::uint64_t deferred_commits = 0;          // a refusal's COMMIT, sent without waiting
  std::uint64_t deferred_commit_failures = 0;  // of those, the ones that failed (an audit row lost)
  std::uint64_t handler_runs = 0;
  std::uint64_t pool_waits = 0;    // times a checkout found no connection free and waited for one
  std::uint64_t pool_wait_us = 0;  // the time they waited, in all
};

class Client;

// Multi-step use (a handler that calls out, e.g. to a payment processor): the key leased in a
// committed transaction, so no transaction stays open across the external call. Each member is
// its own short transaction on a pooled connection. A Lease must not outlive its Client.
// Dropping it without complete/release records nothing: the lease runs out, and the next
// request resumes at the last checkpoint (or, without one, starts afresh once the lease ended).
class Lease {
 public:
  Lease(Lease&&) noexcept;
  Lease& operator=(Lease&&) noexcept;
  ~Lease();

  bool resumed() const noexcept;  // a takeover: continue from recovery_point()
  const std::optional<std::string>& recovery_point() const noexcept;
  const std::optional<std::string>& recovery_data() const noexcept;  // JSON text
  const std::string& handle() const noexcept;
  std::int64_t fencing_token() const noexcept;
  // The key to send to the processor: the same for every attempt of this generation. It comes
  // with the lease from begin()'s acquire and is never asked for later (a holder whose lease was
  // taken over could otherwise get the next generation's key).
  const std::string& handler_key() const noexcept;
  // idem.checkpoint: records progress (e.g. "charge_created", {"charge_id":"ch_1"}) and extends
  // the lease. LeaseLost if another attempt took the key over. One round trip (autocommit).
  // handler_called false: a step before the processor was called (the audit counts executions).
  void checkpoint(const std::string& recovery_point, const std::optional<std::string>& data_json = std::nullopt,
                  bool handler_called = true);
  // idem.complete with `response` and its audit fields, committed; returns it. One round trip.
  Response complete(const Response& response, const Audit& audit = {});
  // The last step's writes with the completion: handler(attempt) runs in a transaction that
  // also completes the key (BEGIN, the handler's statements, complete, COMMIT).
  Response complete(const std::function<Response(Attempt&)>& handler);
  // idem.release after a transient failure: the next request is a fresh attempt, or resumes at
  // the last checkpoint. One round trip. handler_called: whether the processor was called; unless
  // it is false, the next attempt must carry the same payload (another is a mismatch, 422), since
  // the processor may hold a charge under this generation's key.
  void release(const std::string& error, std::optional<bool> handler_called = std::nullopt);

  struct State;
  explicit Lease(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

class Client {
 public:
  using Handler = std::function<Response(Attempt&)>;

  // uri: a libpq URI (postgresql://...). Connects lazily; thread-safe.
  Client(std::string uri, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The exactly-once call. Returns the handler's response (committed with its writes), the
  // stored response of a replay, or a problem response; rethrows what the handler throws (after
  // rolling back: the key stays free); throws OutcomeUnknown when the COMMIT's fate is unknown.
  // A serialization failure or deadlock (40001, 40P01) runs the request again, up to 3 times in
  // all, so the handler may run more than once: its database writes only ever commit once.
  Response run(const Request& request, const Handler& handler);

  // Multi-step use: leases the key in its own committed transaction (one round trip) and returns
  // the Lease, or the early response (replay, 409, 422, 400: the same answers as run). A request
  // without a key gets 400 even with allow_missing_key: there is nothing to lease.
  std::variant<Lease, Response> begin(const Request& request);

  // A read outside any key's work (e.g. a lookup before an external call): one statement in
  // autocommit on a pooled connection; rows as text. On a pooled connection found dead it is sent
  // again on another, so writes belong in run() or a Lease.
  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params = {});

  ClientStats stats() const;
  const ClientOptions& options() const noexcept;

 private:
  static constexpr int kRunAttempts = 3;
  Response run_once(const Request& request, const Handler& handler);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether a problem answer is the key's recorded result, said by the member "stored" (docs/client.md):
//   yes: the service completes the key with it (Lease::complete, or a handler's return in run):
//        a retry gets these bytes again, and a changed request with the same key is 422;
//   no:  answered before or instead of any key work, nothing recorded: the request may be fixed
//        and sent again with the same key;
//   unsaid: no member (not known, e.g. the connection broke during COMMIT).
enum class Stored { unsaid, no, yes };

// RFC 9457 application/problem+json: {"type","title","status","detail","code"} in that order,
// then "stored" unless unsaid.
Response problem_response(int status, const std::string& code, const std::string& title,
                          const std::string& detail, const std::string& type_base = "urn:pg-idempotency:error:");
Response problem_response(int status, const std::string& code, const std::string& title, const std::string& detail,
                          Stored stored, const std::string& type_base = "urn:pg-idempotency:error:");
// The HTTP answer docs/errors.md gives a ClientError (e.g. LeaseLost: 503 + Retry-After), with
// "stored": false (a ClientError means nothing was recorded), unsaid for OutcomeUnknown.
Response problem_response(const ClientError& error, const ClientOptions& options = {});

}  // namespace idem
