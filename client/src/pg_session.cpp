// The libpqxx side of pg_session.hpp: a connection with its prepared statements, one
// nontransaction through which BEGIN/COMMIT/ROLLBACK and every statement go, LISTEN and the wait
// for notifications, and every pqxx exception turned into the client's own (errors.hpp) with the
// server's SQLSTATE.
#include "pg_session.hpp"

#include "idem/client.hpp"

#include <sys/socket.h>

#include <libpq-fe.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <pqxx/pqxx>

namespace idem::pg {
namespace {

// Text parameters never contain NUL (bytea travels as hex), so C strings carry them whole.
std::vector<const char*> pointers(const std::vector<SqlValue>& params) {
  std::vector<const char*> out;
  out.reserve(params.size());
  for (const SqlValue& p : params) out.push_back(p ? p->c_str() : nullptr);
  return out;
}

std::vector<SqlRow> rows_of(const pqxx::result& r) {
  std::vector<SqlRow> out;
  out.reserve(r.size());
  for (const auto& row : r) {
    SqlRow cells;
    cells.reserve(row.size());
    for (const auto& field : row) {
      cells.push_back(field.is_null() ? SqlValue{} : SqlValue{std::string(field.c_str(), field.size())});
    }
    out.push_back(std::move(cells));
  }
  return out;
}

// pqxx 6.4 gives the whole error text ("ERROR:  ERR_X: msg\nDETAIL:  ...\nHINT:  ...\nCONTEXT:
// ..."): the primary message and the hint, without the severity. DETAIL and CONTEXT (a PL/pgSQL
// call stack) are the server's, not the caller's.
std::pair<std::string, std::string> split_message(const std::string& text) {
  std::string message = text;
  const auto context_at = message.find("\nCONTEXT:  ");
  if (context_at != std::string::npos) message.resize(context_at);
  std::string hint;
  const auto hint_at = message.find("\nHINT:  ");
  if (hint_at != std::string::npos) {
    hint = message.substr(hint_at + 8);
    message.resize(hint_at);
  }
  const auto detail_at = message.find("\nDETAIL:  ");
  if (detail_at != std::string::npos) message.resize(detail_at);
  for (const char* prefix : {"ERROR:  ", "FATAL:  "}) {
    if (message.rfind(prefix, 0) == 0) message.erase(0, 8);
  }
  while (!message.empty() && message.back() == '\n') message.pop_back();
  while (!hint.empty() && hint.back() == '\n') hint.pop_back();
  return {message, hint};
}

// Raises the flag that wait_for_notification reads; libpqxx calls it from await_notification.
class Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& c, const std::string& channel, bool& flag)
      : pqxx::notification_receiver(c, channel), flag_(flag) {}
  void operator()(const std::string&, int) override { flag_ = true; }

 private:
  bool& flag_;
};

// Keeps the server's WARNINGs (libpqxx drops notices no handler takes), at most 16 between looks.
class WarningKeeper final : public pqxx::errorhandler {
 public:
  WarningKeeper(pqxx::connection_base& c, std::vector<std::string>& kept) : pqxx::errorhandler(c), kept_(kept) {}
  bool operator()(const char message[]) noexcept override {
    try {
      std::string m(message);
      while (!m.empty() && m.back() == '\n') m.pop_back();
      // One line in a log: "WARNING: ... DETAIL: ..." as the server sent it, newlines made spaces.
      std::replace(m.begin(), m.end(), '\n', ' ');
      if (m.rfind("WARNING:", 0) == 0 && kept_.size() < 16) kept_.push_back(std::move(m));
    } catch (...) {  // out of memory: the warning is lost, the statement is not
    }
    return true;
  }

 private:
  std::vector<std::string>& kept_;
};

ConnectionLost connection_lost(const std::string& what) {
  return ConnectionLost("ERR_CLIENT_CONNECTION_LOST", "08006",
                        "connection lost before COMMIT, nothing was committed: " + what);
}

}  // namespace

struct Session::Impl {
  Impl(const std::string& uri, Counters* c) : conn(uri), warning_keeper(conn, warnings), counters(c ? *c : own_counters) {}
  Counters own_counters;  // when the caller keeps none
  pqxx::connection conn;
  std::vector<std::string> warnings;
  WarningKeeper warning_keeper;  // destroyed before conn
  std::vector<std::unique_ptr<Receiver>> receivers;  // destroyed before conn
  std::unique_ptr<pqxx::nontransaction> tx;  // destroyed before conn; null only when broken
  std::unique_ptr<pqxx::pipeline> in_flight;  // a COMMIT sent without waiting; before tx
  Counters& counters;
  bool broken = false;
  bool notified = false;  // raised by a Receiver

  // Reads the answer of a COMMIT sent without waiting (it has usually arrived by now).
  void settle() noexcept {
    if (!in_flight) return;
    try {
      in_flight->complete();
    } catch (const pqxx::broken_connection&) {
      broken = true;
      counters.deferred_commit_failures.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      if (!conn.is_open()) broken = true;
      counters.deferred_commit_failures.fetch_add(1, std::memory_order_relaxed);
    }
    try {
      in_flight.reset();
    } catch (...) {
      broken = true;
    }
  }

  // `EXECUTE name('lit', NULL, ...)`: a prepared statement run from a simple-protocol message,
  // so it can share the message with BEGIN or COMMIT.
  std::string execute_sql(const char* name, const std::vector<SqlValue>& params) {
    std::string sql = "EXECUTE ";
    sql += name;
    sql += '(';
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (i) sql += ", ";
      sql += params[i] ? conn.quote(*params[i]) : std::string("NULL");
    }
    sql += ')';
    return sql;
  }

  // Runs f, translating pqxx exceptions; `committing` turns a broken connection into OutcomeUnknown.
  template <typename F>
  auto guarded(F&& f, bool committing = false) -> decltype(f()) {
    settle();
    if (!tx) throw connection_lost("no transaction object (the connection broke during a wait)");
    counters.round_trips.fetch_add(1, std::memory_order_relaxed);
    try {
      return f();
    } catch (const pqxx::broken_connection& e) {
      // libpqxx throws this for a server's class 08 error too, over a connection still open: on
      // Citus the coordinator so reports a worker it cannot reach. The statement failed and its
      // transaction with it; this session is fine and is kept (a consumer's other tenants go on).
      if (conn.is_open() && !committing) {
        const auto [message, hint] = split_message(e.what());
        throw DatabaseError("SQLSTATE_08006", "08006", message, hint);
      }
      broken = true;
      if (committing) throw OutcomeUnknown(e.what());
      throw connection_lost(e.what());
    } catch (const pqxx::in_doubt_error& e) {
      broken = true;
      throw OutcomeUnknown(e.what());
    } catch (const pqxx::serialization_failure& e) {
      throw DatabaseError("SQLSTATE_40001", "40001", split_message(e.what()).first);
    } catch (const pqxx::deadlock_detected& e) {
      throw DatabaseError("SQLSTATE_40P01", "40P01", split_message(e.what()).first);
    } catch (const pqxx::sql_error& e) {
      if (!conn.is_open()) {
        broken = true;
        if (committing) throw OutcomeUnknown(e.what());
      }
      const auto [message, hint] = split_message(e.what());
      // libpqxx 6.4 throws insufficient_privilege without its SQLSTATE.
      const bool denied = dynamic_cast<const pqxx::insufficient_privilege*>(&e) != nullptr;
      throw_for_sqlstate(e.sqlstate().empty() && denied ? std::string("42501") : e.sqlstate(), message, hint);
    } catch (const pqxx::failure& e) {
      if (!conn.is_open()) {
        broken = true;
        if (committing) throw OutcomeUnknown(e.what());
      }
      throw DatabaseError("ERR_CLIENT_DATABASE", "", e.what());
    }
  }

  // libpqxx hands notifications to receivers only while no transaction object is open, so the
  // nontransaction steps aside for the wait (opening or closing one sends nothing). Never called
  // on a broken connection: await_notification would reconnect it behind the session's back.
  void await(std::chrono::milliseconds timeout) {
    const long ms = std::max<long>(0, static_cast<long>(timeout.count()));
    tx.reset();
    try {
      conn.await_notification(ms / 1000, (ms % 1000) * 1000);
    } catch (...) {
      broken = true;  // consume_input failed: the server closed the connection
    }
    try {
      tx = std::make_unique<pqxx::nontransaction>(conn, "idem_client");
    } catch (...) {
      broken = true;  // without tx the session can do nothing more
    }
    if (broken || !conn.is_open()) {
      broken = true;
      throw connection_lost("while waiting for a notification");
    }
  }
};

Session::Session(const std::string& uri, const std::vector<Statement>& statements, Counters& counters)
    : Session(uri, statements, &counters) {}

Session::Session(const std::string& uri) : Session(uri, {}, nullptr) {}

Session::Session(const std::string& uri, const std::vector<Statement>& statements, Counters* counters) {
  try {
    impl_ = std::make_unique<Impl>(uri, counters);
    for (const Statement& s : statements) {
      impl_->conn.prepare(s.name, s.sql);
      impl_->conn.prepare_now(s.name);  // a typo or a missing extension fails here, once
    }
    impl_->tx = std::make_unique<pqxx::nontransaction>(impl_->conn, "idem_client");
  } catch (const pqxx::broken_connection& e) {
    throw ConnectionLost("ERR_CLIENT_CONNECTION_LOST", "08006", std::string("cannot connect: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    const auto [message, hint] = split_message(e.what());
    throw_for_sqlstate(e.sqlstate(), message, hint);
  }
}

Session::~Session() {
  try {
    impl_->settle();
    impl_->tx.reset();
    // Closing the connection ends its LISTENs: without it each receiver would send UNLISTEN.
    if (!impl_->receivers.empty()) impl_->conn.disconnect();
    impl_->receivers.clear();
  } catch (...) {
  }
}

bool Session::healthy() const noexcept { return !impl_->broken && impl_->conn.is_open(); }

bool Session::probe() noexcept {
  impl_->settle();  // its answer would look like unprompted traffic
  if (!healthy()) return false;
  // Peek without consuming (libpq reads it later if it is harmless): an idle connection gets
  // nothing unprompted but a notice, a notification or a parameter status; EOF or an
  // ErrorResponse (the FATAL of a terminated backend) means it is dead.
  const int fd = impl_->conn.sock();
  char first = 0;
  const ssize_t n = fd < 0 ? 0 : ::recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || (n == 1 && first == 'E')) impl_->broken = true;
  return healthy();
}

void Session::begin() {
  impl_->guarded([&] { impl_->tx->exec("BEGIN"); });
}

void Session::commit() {
  impl_->guarded([&] { impl_->tx->exec("COMMIT"); }, /*committing=*/true);
}

void Session::rollback() noexcept {
  if (impl_->broken) return;
  try {
    impl_->guarded([&] { impl_->tx->exec("ROLLBACK"); });
  } catch (...) {
    impl_->broken = true;
  }
}

std::vector<SqlRow> Session::exec(const std::string& sql, const std::vector<SqlValue>& params) {
  return impl_->guarded([&] {
    const auto ptrs = pointers(params);
    return rows_of(impl_->tx->exec_params(sql, pqxx::prepare::make_dynamic_params(ptrs)));
  });
}

std::vector<SqlRow> Session::exec_prepared(const char* name, const std::vector<SqlValue>& params) {
  return impl_->guarded([&] {
    const auto ptrs = pointers(params);
    return rows_of(impl_->tx->exec_prepared(name, pqxx::prepare::make_dynamic_params(ptrs)));
  });
}

std::vector<SqlRow> Session::exec_prepared_autocommit(const char* name, const std::vector<SqlValue>& params) {
  return impl_->guarded(
      [&] {
        const auto ptrs = pointers(params);
        return rows_of(impl_->tx->exec_prepared(name, pqxx::prepare::make_dynamic_params(ptrs)));
      },
      /*committing=*/true);
}

std::vector<SqlRow> Session::begin_and_execute(const char* name, const std::vector<SqlValue>& params) {
  return impl_->guarded([&] { return rows_of(impl_->tx->exec("BEGIN; " + impl_->execute_sql(name, params))); });
}

void Session::execute_and_commit(const char* name, const std::vector<SqlValue>& params) {
  impl_->guarded([&] { impl_->tx->exec(impl_->execute_sql(name, params) + "; COMMIT"); }, /*committing=*/true);
}

void Session::commit_without_waiting() {
  impl_->settle();
  if (impl_->broken) return;
  try {
    impl_->in_flight = std::make_unique<pqxx::pipeline>(*impl_->tx, "idem_deferred_commit");
    impl_->in_flight->insert("COMMIT");  // retain 0: sent now
    impl_->counters.deferred_commits.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
    impl_->broken = true;  // the pool closes it: an open transaction goes with the connection
    impl_->counters.deferred_commit_failures.fetch_add(1, std::memory_order_relaxed);
  }
}

void Session::listen(const std::string& channel) {
  impl_->guarded([&] {
    impl_->receivers.push_back(std::make_unique<Receiver>(impl_->conn, channel, impl_->notified));
    // libpqxx swallows a connection that broke during LISTEN.
    if (!impl_->conn.is_open()) throw pqxx::broken_connection("connection lost during LISTEN " + channel);
  });
}

bool Session::wait_for_notification(std::chrono::milliseconds timeout) {
  impl_->settle();
  if (!impl_->notified) {
    if (!healthy()) throw connection_lost("while waiting for a notification");
    impl_->await(timeout);
  }
  return std::exchange(impl_->notified, false);
}

std::vector<std::string> Session::take_warnings() { return std::exchange(impl_->warnings, {}); }

int Session::backend_pid() const { return impl_->conn.backendpid(); }

std::string with_host(const std::string& uri, const std::string& host, int port) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(uri.c_str(), &error);
  if (options == nullptr) {
    const std::string why = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    throw DatabaseError("ERR_CLIENT_DATABASE", "", "cannot read the connection string: " + why);
  }
  const auto quoted = [](const std::string& value) {
    std::string out = "'";
    for (char c : value) {
      if (c == '\\' || c == '\'') out += '\\';
      out += c;
    }
    return out + "'";
  };
  std::string out = "host=" + quoted(host) + " port=" + std::to_string(port);
  const char* env_timeout = std::getenv("PGCONNECT_TIMEOUT");
  bool timeout_given = env_timeout != nullptr && *env_timeout != '\0';
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    const std::string keyword = o->keyword;
    if (o->val == nullptr || keyword == "host" || keyword == "hostaddr" || keyword == "port") continue;
    if (keyword == "connect_timeout") timeout_given = true;
    out += ' ' + keyword + '=' + quoted(o->val);
  }
  PQconninfoFree(options);
  // A node whose server accepts connections but does not answer (stopped, overloaded) would hold
  // the caller for ever: libpq waits without a limit unless told one.
  if (!timeout_given) out += " connect_timeout=" + std::to_string(kNodeConnectTimeoutSeconds);
  return out;
}

}  // namespace idem::pg
