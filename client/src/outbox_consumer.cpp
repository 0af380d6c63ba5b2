// The outbox consumer worker; see include/idem/outbox_consumer.hpp. The only file of the consumer
// that knows libpqxx (6.4 on Debian 12).
#include "idem/outbox_consumer.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include <pqxx/pqxx>

namespace idem {
namespace {

std::vector<const char*> pointers(const std::vector<SqlValue>& params) {
  std::vector<const char*> out;
  out.reserve(params.size());
  for (const SqlValue& p : params) out.push_back(p ? p->c_str() : nullptr);
  return out;
}

SqlRows rows_of(const pqxx::result& r) {
  SqlRows out;
  out.reserve(r.size());
  for (const auto& row : r) {
    std::vector<SqlValue> cells;
    cells.reserve(row.size());
    for (const auto& field : row) cells.push_back(field.is_null() ? SqlValue{} : SqlValue{field.c_str()});
    out.push_back(std::move(cells));
  }
  return out;
}

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

class WorkTransaction final : public SqlTransaction {
 public:
  explicit WorkTransaction(pqxx::work& work) : work_(work) {}
  SqlRows exec(const std::string& sql, const std::vector<SqlValue>& params) override {
    const auto ptrs = pointers(params);
    return rows_of(work_.exec_params(sql, pqxx::prepare::make_dynamic_params(ptrs)));
  }

 private:
  pqxx::work& work_;
};

class Wakeup final : public pqxx::notification_receiver {
 public:
  Wakeup(pqxx::connection_base& c, bool& flag) : pqxx::notification_receiver(c, "idem_outbox"), flag_(flag) {}
  void operator()(const std::string&, int) override { flag_ = true; }

 private:
  bool& flag_;
};

// The claim is no longer this worker's: taken over after its visibility ran out, given back, or
// its event purged (only after every consumer acked it).
bool claim_lost(const pqxx::sql_error& e) {
  return e.sqlstate() == "IK023" || e.sqlstate() == "IK022" || e.sqlstate() == "IK021";
}

constexpr const char* kClaim =
    "SELECT event_id, tenant_id, topic, key, payload, attempt, redelivered, token,"
    " extract(epoch FROM clock_timestamp() - committed_at)"
    " FROM idem.claim($1, $2::text[], $3, $4::interval)";

}  // namespace

struct OutboxConsumer::Impl {
  std::string uri;
  OutboxConsumerOptions options;
  std::string topics;  // NULL (all subscribed) or a text[] literal
  std::unique_ptr<pqxx::connection> conn;
  std::unique_ptr<Wakeup> wakeup;  // destroyed before conn
  bool notified = false;
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

  pqxx::connection& connection() {
    if (conn && conn->is_open()) return *conn;
    if (conn) count(&OutboxConsumerStats::reconnects);
    wakeup.reset();
    conn = std::make_unique<pqxx::connection>(uri);
    // LISTEN before the first claim: a commit after that claim read its snapshot is notified.
    if (options.listen) wakeup = std::make_unique<Wakeup>(*conn, notified);
    return *conn;
  }

  void drop_connection() {
    wakeup.reset();
    conn.reset();
  }

  std::vector<OutboxEvent> claim(std::string& token) {
    pqxx::connection& c = connection();
    // Cleared before the claim reads: a notification that arrives while it runs (libpqxx hands
    // it over at the end of the transaction) means there may be more.
    notified = false;
    pqxx::work w(c);
    const std::string batch = std::to_string(options.batch);
    const std::string visibility = std::to_string(options.visibility.count()) + " milliseconds";
    const std::vector<SqlValue> params{options.consumer, options.topics.empty() ? SqlValue{} : SqlValue{topics}, batch,
                                       visibility};
    const auto ptrs = pointers(params);
    const pqxx::result r = w.exec_params(kClaim, pqxx::prepare::make_dynamic_params(ptrs));
    w.commit();
    std::vector<OutboxEvent> events;
    events.reserve(r.size());
    for (const auto& row : r) {
      OutboxEvent e;
      e.event_id = row[0].as<std::int64_t>();
      e.tenant_id = row[1].c_str();
      e.topic = row[2].c_str();
      if (!row[3].is_null()) e.key = std::string(row[3].c_str());
      e.payload = row[4].c_str();
      e.attempt = row[5].as<int>();
      e.redelivered = std::string(row[6].c_str()) == "t";
      token = row[7].c_str();
      e.commit_age_seconds = row[8].as<double>();
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
    pqxx::work w(connection());
    WorkTransaction tx(w);
    std::uint64_t applied = 0, skipped = 0;
    std::string ids = "{";
    for (std::size_t i = 0; i < n; ++i) {
      const pqxx::result once =
          w.exec_params("SELECT idem.consume_once($1, $2, $3::uuid)", options.consumer, events[i].event_id, token);
      if (once[0][0].as<bool>()) {
        try {
          handler(tx, events[i]);
        } catch (const pqxx::broken_connection&) {
          throw;
        } catch (const pqxx::serialization_failure&) {
          throw;  // the transaction's fault, not the event's: apply_group runs it again
        } catch (const pqxx::deadlock_detected&) {
          throw;
        } catch (const std::exception& e) {
          error = e.what();
          return i;  // w rolls back: no effect of this batch stays
        }
        ++applied;
      } else {
        ++skipped;
      }
      if (i) ids += ',';
      ids += std::to_string(events[i].event_id);
    }
    ids += '}';
    if (n > 0) w.exec_params("SELECT idem.ack($1, $2::bigint[], $3::uuid)", options.consumer, ids, token);
    w.commit();
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
        } catch (const pqxx::serialization_failure&) {
          if (++retries > 3) throw;
        } catch (const pqxx::deadlock_detected&) {
          if (++retries > 3) throw;
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
    } catch (const pqxx::sql_error& e) {
      if (!claim_lost(e)) throw;
      count(&OutboxConsumerStats::lost_claims);
    }
  }

  void nack(const OutboxEvent& event, const std::string& token, const std::string& error) {
    pqxx::work w(connection());
    w.exec_params("SELECT idem.nack($1, $2, $3::uuid, $4)", options.consumer, event.event_id, token,
                  error.empty() ? std::string("handler failed") : error);
    w.commit();
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
      if (!impl_->notified) impl_->connection().await_notification(0, 100000);
      if (impl_->notified) {
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
    } catch (const pqxx::broken_connection&) {
      impl_->drop_connection();
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    } catch (const pqxx::in_doubt_error&) {
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
