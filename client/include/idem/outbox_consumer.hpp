// An outbox consumer worker (docs/outbox.md): claims batches for one consumer, applies each event
// at most once in the transaction of its effect (idem.consume_once with the claim's token, then
// idem.ack in that same transaction), and when there is nothing to do waits for the NOTIFY that
// an emitting commit sends, falling back to a slow poll; without LISTEN (a transaction-pooling
// proxy) it polls. Correctness never rests on the notification: it only shortens the wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace idem {

using SqlValue = std::optional<std::string>;  // text format; std::nullopt is SQL NULL
using SqlRows = std::vector<std::vector<SqlValue>>;

// The effect's transaction, as the handler sees it.
class SqlTransaction {
 public:
  virtual ~SqlTransaction() = default;
  virtual SqlRows exec(const std::string& sql, const std::vector<SqlValue>& params = {}) = 0;
};

struct OutboxEvent {
  std::int64_t event_id = 0;
  std::string tenant_id;
  std::string topic;
  std::optional<std::string> key;
  std::string payload;  // JSON text
  int attempt = 1;
  bool redelivered = false;
  double commit_age_seconds = 0;  // from the commit to this claim, by the server's clock
};

struct OutboxConsumerOptions {
  std::string consumer;
  std::vector<std::string> topics;  // empty: every topic the consumer subscribes to
  int batch = 100;
  std::chrono::milliseconds visibility{30000};
  // LISTEN for emitting commits; when false (a pooler that cannot carry LISTEN) poll instead.
  bool listen = true;
  // The longest idle wait: with LISTEN a safety net for a lost notification (and the longest a
  // crashed worker's expired claim waits for an idle worker), without it the polling period. One
  // claim per period per idle worker; for 5 minutes after a nack, at most 1 s (retries are not
  // notified).
  std::chrono::milliseconds idle_poll{5000};
  std::chrono::milliseconds idle_poll_without_listen{1000};
  // Through a Citus coordinator (docs/citus.md): each poll finds the tenants with a backlog
  // (idem.outbox_backlog) and claims them one at a time (idem.claim_tenant), each group's effect,
  // consume_once and ack in a transaction on its tenant's node (the tenant-first calls); it
  // LISTENs on every node of pg_dist_node too, where the emitting commits notify.
  bool citus = false;
};

struct OutboxConsumerStats {
  std::uint64_t claims = 0;        // polls (on Citus, a poll claims each tenant with a backlog)
  std::uint64_t empty_claims = 0;
  std::uint64_t events = 0;             // handed out by claim
  std::uint64_t applied = 0;            // handler ran and its transaction committed
  std::uint64_t skipped_redeliveries = 0;  // consume_once said false
  std::uint64_t failed = 0;             // handler threw: the event was nacked
  std::uint64_t lost_claims = 0;        // the claim was taken over before this worker committed
  std::uint64_t woken_by_notify = 0;
  std::uint64_t woken_by_poll = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t errors = 0;             // other failures of a poll (logged to stderr; the worker goes on)
};

class OutboxConsumer {
 public:
  // Runs inside the effect's transaction for an event this consumer has not applied before; a
  // throw rolls the effect back and nacks the event with the exception's text.
  using Handler = std::function<void(SqlTransaction&, const OutboxEvent&)>;

  OutboxConsumer(std::string connection_uri, OutboxConsumerOptions options);
  ~OutboxConsumer();
  OutboxConsumer(const OutboxConsumer&) = delete;
  OutboxConsumer& operator=(const OutboxConsumer&) = delete;

  // One claim and its batch; returns how many events the claim handed out (0: nothing to do).
  std::size_t poll_once(const Handler& handler);
  // Waits until an emitting commit is notified or the idle poll passes (or stop() is called);
  // true when woken by a notification.
  bool wait_for_events();
  // poll_once / wait_for_events until stop(); reconnects after a lost connection.
  void run(const Handler& handler);
  // Thread-safe; run() returns within about 100 ms.
  void stop();
  OutboxConsumerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace idem
