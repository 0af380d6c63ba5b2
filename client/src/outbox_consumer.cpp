// The outbox consumer worker; see include/idem/outbox_consumer.hpp. It reaches the server only
// through pg::Session (pg_session.hpp, the client's one door to the PostgreSQL library), so its
// errors are the client's exception classes (errors.hpp) with the server's SQLSTATE.
#include "idem/outbox_consumer.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <mutex>
#include <thread>

#include "idem/errors.hpp"
#include "pg_session.hpp"

namespace idem {
namespace {

// A text[] literal: {"a","b"} with quotes and backslashes escaped.
std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// A column of idem.claim's answer that is never NULL, as a number (locale-independent).
template <typename T>
T number(const SqlValue& cell, const char* column) {
  T value{};
  if (cell) {
    const char* end = cell->data() + cell->size();
    const auto [at, ec] = std::from_chars(cell->data(), end, value);
    if (ec == std::errc() && at == end) return value;
  }
  throw DatabaseError("ERR_CLIENT_DATABASE", "", std::string("unexpected ") + column + " from idem.claim: " +
                                                     (cell ? *cell : std::string("NULL")));
}

// idem.consume_once's answer: true means apply, false a redelivery of an applied event.
bool first_time(const std::vector<SqlRow>& rows) {
  if (rows.size() == 1 && rows[0].size() == 1 && rows[0][0] && (*rows[0][0] == "t" || *rows[0][0] == "f")) {
    return *rows[0][0] == "t";
  }
  throw DatabaseError("ERR_CLIENT_DATABASE", "", "unexpected answer from idem.consume_once");
}

class SessionTransaction final : public SqlTransaction {
 public:
  explicit SessionTransaction(pg::Session& session) : session_(session) {}
  SqlRows exec(const std::string& sql, const std::vector<SqlValue>& params) override {
    return session_.exec(sql, params);
  }

 private:
  pg::Session& session_;
};

// A serialization failure or deadlock: the transaction's fault, not the event's; run it again.
bool retryable(const std::exception& e) {
  const auto* c = dynamic_cast<const ClientError*>(&e);
  return c && (c->sqlstate() == "40001" || c->sqlstate() == "40P01");
}

// The claim is no longer this worker's: taken over after its visibility ran out, given back, or
// its event purged (only after every consumer acked it).
bool claim_lost(const ClientError& e) {
  return e.sqlstate() == "IK023" || e.sqlstate() == "IK022" || e.sqlstate() == "IK021";
}

// BEGIN; the statement; COMMIT. A failed statement rolls back; a failed COMMIT ended the
// transaction itself.
std::vector<SqlRow> exec_in_transaction(pg::Session& s, const char* sql, const std::vector<SqlValue>& params) {
  s.begin();
  std::vector<SqlRow> rows;
  try {
    rows = s.exec(sql, params);
  } catch (...) {
    s.rollback();
    throw;
  }
  s.commit();
  return rows;
}

constexpr const char* kChannel = "idem_outbox";
constexpr const char* kClaim =
    "SELECT event_id, tenant_id, topic, key, payload, attempt, redelivered, token,"
    " extract(epoch FROM clock_timestamp() - committed_at)"
    " FROM idem.claim($1, $2::text[], $3, $4::interval)";

}  // namespace

struct OutboxConsumer::Impl {
  std::string uri;
  OutboxConsumerOptions options;
  std::string topics;  // NULL (all subscribed) or a text[] literal
  std::unique_ptr<pg::Session> db;
  std::atomic<bool> stopping{false};
  // After a nack no notification announces the retry: poll every second until the longest
  // backoff (5 min) has passed.
  std::chrono::steady_clock::time_point retries_until{};
  mutable std::mutex stats_mutex;
  OutboxConsumerStats stats;

  void count(std::uint64_t OutboxConsumerStats::*field, std::uint64_t n = 1) {
    std::lock_guard<std::mutex> lock(stats_mutex);
    stats.*field += n;
  }

  pg::Session& session() {
    if (db && db->healthy()) return *db;
    if (db) count(&OutboxConsumerStats::reconnects);
    db.reset();
    auto fresh = std::make_unique<pg::Session>(uri);
    // LISTEN before the first claim: a commit after that claim read its snapshot is notified.
    if (options.listen) fresh->listen(kChannel);
    db = std::move(fresh);
    return *db;
  }

  void drop_connection() { db.reset(); }

  // A notification that arrives while the claim runs stays with the session (libpq keeps it), so
  // the next wait returns at once: there may be more.
  std::vector<OutboxEvent> claim(std::string& token) {
    const std::string batch = std::to_string(options.batch);
    const std::string visibility = std::to_string(options.visibility.count()) + " milliseconds";
    const std::vector<SqlValue> params{options.consumer, options.topics.empty() ? SqlValue{} : SqlValue{topics}, batch,
                                       visibility};
    const std::vector<SqlRow> rows = exec_in_transaction(session(), kClaim, params);
    std::vector<OutboxEvent> events;
    events.reserve(rows.size());
    for (const SqlRow& row : rows) {
      if (row.size() != 9) throw DatabaseError("ERR_CLIENT_DATABASE", "", "unexpected row from idem.claim");
      OutboxEvent e;
      e.event_id = number<std::int64_t>(row[0], "event_id");
      e.tenant_id = row[1].value_or("");
      e.topic = row[2].value_or("");
      e.key = row[3];
      e.payload = row[4].value_or("");
      e.attempt = number<int>(row[5], "attempt");
      e.redelivered = row[6] == SqlValue{"t"};
      token = row[7].value_or("");
      e.commit_age_seconds = number<double>(row[8], "commit age");
      events.push_back(std::move(e));
    }
    count(&OutboxConsumerStats::claims);
    if (events.empty()) count(&OutboxConsumerStats::empty_claims);
    count(&OutboxConsumerStats::events, events.size());
    return events;
  }

  // Applies events[0, n) and acks them in one transaction; returns the index of the event whose
  // handler threw, or n. A lost claim rolls everything back (the next claim gets the events).
  std::size_t apply(const std::vector<OutboxEvent>& events, std::size_t n, const std::string& token,
                    const Handler& handler, std::string& error) {
    if (n == 0) return 0;
    pg::Session& s = session();
    SessionTransaction tx(s);
    std::uint64_t applied = 0, skipped = 0;
    std::string ids = "{";
    s.begin();
    try {
      for (std::size_t i = 0; i < n; ++i) {
        if (first_time(s.exec("SELECT idem.consume_once($1, $2, $3::uuid)",
                              {options.consumer, std::to_string(events[i].event_id), token}))) {
          try {
            handler(tx, events[i]);
          } catch (const std::exception& e) {
            // A broken connection, a serialization failure or a deadlock is not the event's fault:
            // run() reconnects, apply_group runs the transaction again.
            if (!s.healthy() || retryable(e)) throw;
            error = e.what();
            s.rollback();  // no effect of this batch stays
            return i;
          }
          ++applied;
        } else {
          ++skipped;
        }
        if (i) ids += ',';
        ids += std::to_string(events[i].event_id);
      }
      ids += '}';
      s.exec("SELECT idem.ack($1, $2::bigint[], $3::uuid)", {options.consumer, ids, token});
    } catch (...) {
      s.rollback();
      throw;
    }
    s.commit();
    count(&OutboxConsumerStats::applied, applied);
    count(&OutboxConsumerStats::skipped_redeliveries, skipped);
    return n;
  }

  // Applies a group's events in claim (commit) order and acks them; when a handler throws, the
  // events before it are applied and acked and the failed one is nacked, so it is the oldest
  // unacked event the nack names. A serialization failure or deadlock retries the transaction.
  void apply_group(const std::vector<OutboxEvent>& events, const std::string& token, const Handler& handler) {
    std::size_t end = events.size();
    std::size_t failed = events.size();
    std::string error;
    int retries = 0;
    try {
      while (true) {
        try {
          const std::size_t stop = apply(events, end, token, handler, error);
          if (stop == end) break;  // [0, end) applied and acked
          failed = stop;           // again without the failed event and what follows it
          end = stop;
        } catch (const ClientError& e) {
          if (!retryable(e) || ++retries > 3) throw;
        }
      }
      if (failed < events.size()) {
        nack(events[failed], token, error);
        // A nacked group event gave the group's claim back, and what follows it is refused below
        // (counted as a lost claim, not as failures). A nacked replay of a dead letter gave back
        // only itself: the group's events handed out behind it are still this claim's.
        if (failed + 1 < events.size()) {
          apply_group(std::vector<OutboxEvent>(events.begin() + static_cast<std::ptrdiff_t>(failed) + 1, events.end()),
                      token, handler);
        }
      }
    } catch (const ClientError& e) {
      if (!claim_lost(e)) throw;
      count(&OutboxConsumerStats::lost_claims);
    }
  }

  void nack(const OutboxEvent& event, const std::string& token, const std::string& error) {
    exec_in_transaction(session(), "SELECT idem.nack($1, $2, $3::uuid, $4)",
                        {options.consumer, std::to_string(event.event_id), token,
                         error.empty() ? std::string("handler failed") : error});
    retries_until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    count(&OutboxConsumerStats::failed);
  }
};

OutboxConsumer::OutboxConsumer(std::string connection_uri, OutboxConsumerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->uri = std::move(connection_uri);
  impl_->options = std::move(options);
  impl_->topics = text_array(impl_->options.topics);
}

OutboxConsumer::~OutboxConsumer() = default;

std::size_t OutboxConsumer::poll_once(const Handler& handler) {
  std::string token;
  const std::vector<OutboxEvent> events = impl_->claim(token);
  if (events.empty()) return 0;
  // Each group of the claim in a transaction of its own: a failing handler or a lost claim in one
  // group leaves the other groups' effects and acks alone (their claims would otherwise expire
  // and count as failures of events that never failed).
  std::vector<std::vector<OutboxEvent>> groups;
  for (const OutboxEvent& e : events) {
    auto same = [&](const std::vector<OutboxEvent>& g) { return g.front().tenant_id == e.tenant_id && g.front().topic == e.topic; };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) {
      groups.push_back({e});
    } else {
      it->push_back(e);
    }
  }
  for (const std::vector<OutboxEvent>& group : groups) impl_->apply_group(group, token, handler);
  return events.size();
}

bool OutboxConsumer::wait_for_events() {
  auto period = impl_->options.listen ? impl_->options.idle_poll : impl_->options.idle_poll_without_listen;
  if (std::chrono::steady_clock::now() < impl_->retries_until) period = std::min(period, std::chrono::milliseconds(1000));
  const auto deadline = std::chrono::steady_clock::now() + period;
  while (!impl_->stopping && std::chrono::steady_clock::now() < deadline) {
    if (impl_->options.listen) {
      // 100 ms at a time, so that stop() is seen.
      if (impl_->session().wait_for_notification(std::chrono::milliseconds(100))) {
        impl_->count(&OutboxConsumerStats::woken_by_notify);
        return true;
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  impl_->count(&OutboxConsumerStats::woken_by_poll);
  return false;
}

void OutboxConsumer::run(const Handler& handler) {
  auto backoff = std::chrono::milliseconds(50);
  while (!impl_->stopping) {
    try {
      if (poll_once(handler) == 0) wait_for_events();
      backoff = std::chrono::milliseconds(50);
    } catch (const ConnectionLost&) {
      impl_->drop_connection();
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    } catch (const OutcomeUnknown&) {
      impl_->drop_connection();  // the ack's commit may or may not have landed: claim again
    } catch (const std::exception& e) {
      // Anything else (retries used up, a refused nack): the worker keeps running; what it held
      // returns to the consumer when its claim's visibility passes.
      std::fprintf(stderr, "idem::OutboxConsumer %s: %s\n", impl_->options.consumer.c_str(), e.what());
      impl_->count(&OutboxConsumerStats::errors);
      impl_->drop_connection();
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  }
}

void OutboxConsumer::stop() { impl_->stopping = true; }

OutboxConsumerStats OutboxConsumer::stats() const {
  std::lock_guard<std::mutex> lock(impl_->stats_mutex);
  return impl_->stats;
}

}  // namespace idem
