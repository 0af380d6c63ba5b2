// One database connection of the client's pool or of an outbox worker: the only door to the C++
// PostgreSQL library (6.4 on Debian 12). Only pg_session.cpp includes it, so a move to 7.x touches
// that file alone. Transactions are explicit statements (BEGIN/COMMIT/ROLLBACK) so that every
// round trip is one counted exec and a connection lost during COMMIT is told apart from one lost
// before it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "idem/types.hpp"

namespace idem::pg {

struct Statement {
  const char* name;
  const char* sql;
};

class Session {
 public:
  // Connects and prepares `statements` (once per connection). Throws ConnectionLost or the
  // ClientError of the server's SQLSTATE. counters.round_trips counts every exchange waited for.
  struct Counters {
    std::atomic<std::uint64_t> round_trips{0};      // exchanges the caller waited for
    std::atomic<std::uint64_t> deferred_commits{0};  // COMMITs sent without waiting
    std::atomic<std::uint64_t> deferred_commit_failures{0};
  };
  Session(const std::string& uri, const std::vector<Statement>& statements, Counters& counters);
  // No prepared statements, counters of its own (the outbox worker's connection).
  explicit Session(const std::string& uri);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // False once the connection broke (or a ROLLBACK failed): the pool throws it away.
  bool healthy() const noexcept;
  // No round trip: reads what the server sent while the connection sat idle (a terminated
  // backend's FATAL and EOF), so a dead connection is found before anything is sent on it.
  bool probe() noexcept;

  // Each is one round trip. Errors arrive as ClientError subclasses (errors.hpp); a broken
  // connection as ConnectionLost, which also marks the session unhealthy.
  void begin();
  // A broken connection here throws OutcomeUnknown: COMMIT may have reached the server.
  void commit();
  // Best effort, never throws; marks the session unhealthy when it fails.
  void rollback() noexcept;
  std::vector<SqlRow> exec(const std::string& sql, const std::vector<SqlValue>& params = {});
  std::vector<SqlRow> exec_prepared(const char* name, const std::vector<SqlValue>& params);
  // A statement outside a transaction block (it commits by itself): a broken connection throws
  // OutcomeUnknown, as for COMMIT.
  std::vector<SqlRow> exec_prepared_autocommit(const char* name, const std::vector<SqlValue>& params);

  // Statements that ride with BEGIN and COMMIT, one round trip each: the prepared statement runs
  // through SQL EXECUTE with its parameters as quoted literals, in one simple-protocol message.
  // BEGIN; EXECUTE name(...)  -- opens the transaction; rows of the EXECUTE.
  std::vector<SqlRow> begin_and_execute(const char* name, const std::vector<SqlValue>& params);
  // EXECUTE name(...); COMMIT -- an error in the EXECUTE skips the COMMIT (roll back after it);
  // a broken connection throws OutcomeUnknown.
  void execute_and_commit(const char* name, const std::vector<SqlValue>& params);
  // Sends COMMIT and returns without waiting: its answer is read before the connection's next
  // use (for a transaction whose outcome the caller does not depend on, e.g. a replay's audit
  // row). A COMMIT that fails is counted in deferred_commit_failures.
  void commit_without_waiting();

  // LISTEN on `channel`, outside a transaction block (one round trip). A broken connection throws
  // ConnectionLost.
  void listen(const std::string& channel);
  // Waits up to `timeout` (no round trip) for a notification on a channel listened to, outside a
  // transaction block. True when one arrived since the last call, also one that came while a
  // statement ran (libpq keeps it until then). A broken connection throws ConnectionLost.
  bool wait_for_notification(std::chrono::milliseconds timeout);

  // The server's WARNINGs since the last call (16 at most), e.g. idem.outbox_backlog naming a
  // Citus node it could not reach.
  std::vector<std::string> take_warnings();

  // The server's backend pid (tests terminate it to break the connection).
  int backend_pid() const;

 private:
  Session(const std::string& uri, const std::vector<Statement>& statements, Counters* counters);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The connection string `uri` (a URI or key=value pairs) with its host and port replaced and every
// other setting kept: a Citus worker, reached as its coordinator is; connect_timeout is
// kNodeConnectTimeoutSeconds unless `uri` or PGCONNECT_TIMEOUT (not empty) sets one. DatabaseError for a
// string libpq cannot read.
constexpr int kNodeConnectTimeoutSeconds = 5;
std::string with_host(const std::string& uri, const std::string& host, int port);

}  // namespace idem::pg
