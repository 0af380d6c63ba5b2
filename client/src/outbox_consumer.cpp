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
constexpr const char* kClaimTenant =
    "SELECT event_id, tenant_id, topic, key, payload, attempt, redelivered, token,"
    " extract(epoch FROM clock_timestamp() - committed_at)"
    " FROM idem.claim_tenant($1, $5, $2::text[], $3, $4::interval)";
constexpr const char* kBacklog = "SELECT DISTINCT tenant_id FROM idem.outbox_backlog($1, $2::text[]) ORDER BY 1";
// The nodes other than the coordinator, where the tenants' commits notify.
constexpr const char* kNodes =
    "SELECT nodename, nodeport FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND groupid <> 0"
    " ORDER BY nodeid";

// The calls for one event, in their plain and tenant-first (Citus) forms.
struct EventCalls {
  const char* consume_once;
  const char* ack;
  const char* nack;
};
constexpr EventCalls kPlainCalls{"SELECT idem.consume_once($1, $2, $3::uuid)", "SELECT idem.ack($1, $2::bigint[], $3::uuid)",
                                 "SELECT idem.nack($1, $2, $3::uuid, $4)"};
constexpr EventCalls kTenantCalls{"SELECT idem.consume_once($1, $2, $3, $4::uuid)",
                                  "SELECT idem.ack($1, $2, $3::bigint[], $4::uuid)",
                                  "SELECT idem.nack($1, $2, $3, $4::uuid, $5, NULL)"};

// What one claim handed out, under its token.
struct Claimed {
  std::string token;
  std::vector<OutboxEvent> events;
};

std::vector<OutboxEvent> events_of(const std::vector<SqlRow>& rows, std::string& token) {
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
  return events;
}

}  // namespace

struct OutboxConsumer::Impl {
  std::string uri;
  OutboxConsumerOptions options;
  std::string topics;  // NULL (all subscribed) or a text[] literal
  std::unique_ptr<pg::Session> db;
  // On Citus: a LISTEN connection to each node but the coordinator, null while it cannot connect.
  std::vector<std::pair<std::string, int>> nodes;
  std::vector<std::unique_ptr<pg::Session>> listeners;
  std::size_t next_tenant = 0;  // where the next poll starts in the tenants with a backlog
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
    if (options.citus && options.listen) {
      nodes.clear();
      listeners.clear();
      read_nodes(*fresh);
      (void)listen_on_nodes();
    }
    db = std::move(fresh);
    return *db;
  }

  // The nodes of pg_dist_node, read at connect and again before each idle wait: a node added
  // since (and a tenant moved to it) notifies where no listener was made. Listeners of nodes
  // still there are kept; those of nodes gone are closed.
  void read_nodes(pg::Session& coordinator) {
    std::vector<std::pair<std::string, int>> now;
    for (const SqlRow& row : coordinator.exec(kNodes)) {
      now.emplace_back(row.at(0).value_or(""), number<int>(row.at(1), "nodeport"));
    }
    if (now == nodes) return;
    std::vector<std::unique_ptr<pg::Session>> kept(now.size());
    for (std::size_t i = 0; i < now.size(); ++i) {
      const auto was = std::find(nodes.begin(), nodes.end(), now[i]);
      if (was != nodes.end()) kept[i] = std::move(listeners[static_cast<std::size_t>(was - nodes.begin())]);
    }
    nodes = std::move(now);
    listeners = std::move(kept);
  }

  // Connects the listeners that are missing or broke; false while one cannot, whose commits then
  // go unnoticed until the next poll. A listener made again may have missed a notification.
  bool listen_on_nodes(bool* remade = nullptr) {
    bool all = true;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (listeners[i] && listeners[i]->healthy()) continue;
      try {
        auto l = std::make_unique<pg::Session>(pg::with_host(uri, nodes[i].first, nodes[i].second));
        l->listen(kChannel);
        if (remade != nullptr) *remade = true;
        listeners[i] = std::move(l);
      } catch (const ClientError& e) {
        listeners[i].reset();
        all = false;
        report("cannot LISTEN on " + nodes[i].first + ":" + std::to_string(nodes[i].second) + ": " + e.what());
      }
    }
    return all;
  }

  void drop_connection() {
    db.reset();
    listeners.clear();
  }

  const EventCalls& calls() const { return options.citus ? kTenantCalls : kPlainCalls; }
  // A failure the worker goes on after: logged to stderr and counted.
  void report(const std::string& what) {
    log(what);
    count(&OutboxConsumerStats::errors);
  }
  void log(const std::string& what) const {
    std::fprintf(stderr, "idem::OutboxConsumer %s: %s\n", options.consumer.c_str(), what.c_str());
  }
  // On Citus, one tenant's failure (its worker down) must not cost the others their claims: were
  // they dropped, their visibility would run out and count against events never tried. A lost
  // connection to the coordinator ends the poll all the same.
  template <typename F>
  void sparing_other_tenants(const std::string& what, F&& f) {
    try {
      f();
    } catch (const ConnectionLost&) {
      throw;
    } catch (const OutcomeUnknown&) {
      throw;
    } catch (const ClientError& e) {
      report(what + ": " + e.what());
    }
  }
  // A claim or a nack, a transaction of its own. On Citus without BEGIN: Citus runs a consumer's
  // call on the tenant's node only outside a transaction block (docs/citus.md), and a claim or a
  // nack lost with the connection is no harm (the claim's visibility runs out).
  std::vector<SqlRow> by_itself(const char* sql, const std::vector<SqlValue>& params) {
    return options.citus ? session().exec(sql, params) : exec_in_transaction(session(), sql, params);
  }
  // The consumer, on Citus the tenant (the tenant-first forms' $2), then the call's own.
  std::vector<SqlValue> call_params(const std::string& tenant, std::vector<SqlValue> own) const {
    own.insert(own.begin(), options.consumer);
    if (options.citus) own.insert(own.begin() + 1, tenant);
    return own;
  }

  // A notification that arrives while the claim runs stays with the session (libpq keeps it), so
  // the next wait returns at once: there may be more.
  // On Citus one claim per tenant with a backlog, up to the batch in all, starting each poll one
  // tenant further so that a busy tenant does not starve the others.
  std::vector<Claimed> claim() {
    const SqlValue topic_list = options.topics.empty() ? SqlValue{} : SqlValue{topics};
    const std::string visibility = std::to_string(options.visibility.count()) + " milliseconds";
    std::vector<Claimed> claims;
    std::size_t handed_out = 0;
    const auto claim_with = [&](const char* sql, std::vector<SqlValue> params) {
      Claimed c;
      c.events = events_of(by_itself(sql, params), c.token);
      handed_out += c.events.size();
      if (!c.events.empty()) claims.push_back(std::move(c));
    };
    if (!options.citus) {
      claim_with(kClaim, {options.consumer, topic_list, std::to_string(options.batch), visibility});
    } else {
      std::vector<std::string> tenants;
      for (const SqlRow& row : session().exec(kBacklog, {options.consumer, topic_list})) {
        tenants.push_back(row.at(0).value_or(""));
      }
      // A node that did not answer: its tenants wait for it, and the operator hears of it here
      // (counted as an error); another warning (Citus's own) is logged only.
      for (const std::string& warning : session().take_warnings()) {
        if (warning.find("idem.outbox_backlog:") != std::string::npos) {
          report(warning);
        } else {
          log(warning);
        }
      }
      const std::size_t first = next_tenant++;
      for (std::size_t i = 0; i < tenants.size() && handed_out < static_cast<std::size_t>(options.batch); ++i) {
        const std::string& tenant = tenants[(first + i) % tenants.size()];
        sparing_other_tenants("claim_tenant for " + tenant, [&] {
          claim_with(kClaimTenant, {options.consumer, topic_list,
                                    std::to_string(options.batch - static_cast<int>(handed_out)), visibility, tenant});
        });
      }
    }
    count(&OutboxConsumerStats::claims);
    if (handed_out == 0) count(&OutboxConsumerStats::empty_claims);
    count(&OutboxConsumerStats::events, handed_out);
    return claims;
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
        if (first_time(s.exec(calls().consume_once,
                              call_params(events[i].tenant_id, {std::to_string(events[i].event_id), token})))) {
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
      s.exec(calls().ack, call_params(events.front().tenant_id, {ids, token}));
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
    by_itself(calls().nack,
                        call_params(event.tenant_id, {std::to_string(event.event_id), token,
                                                      error.empty() ? std::string("handler failed") : error}));
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
  std::size_t handed_out = 0;
  for (const Claimed& claimed : impl_->claim()) {
    // Each group of the claim in a transaction of its own: a failing handler or a lost claim in
    // one group leaves the other groups' effects and acks alone (their claims would otherwise
    // expire and count as failures of events that never failed).
    std::vector<std::vector<OutboxEvent>> groups;
    for (const OutboxEvent& e : claimed.events) {
      auto same = [&](const std::vector<OutboxEvent>& g) {
        return g.front().tenant_id == e.tenant_id && g.front().topic == e.topic;
      };
      auto it = std::find_if(groups.begin(), groups.end(), same);
      if (it == groups.end()) {
        groups.push_back({e});
      } else {
        it->push_back(e);
      }
    }
    for (const std::vector<OutboxEvent>& group : groups) {
      const auto apply = [&] { impl_->apply_group(group, claimed.token, handler); };
      if (impl_->options.citus) {
        impl_->sparing_other_tenants("applying " + group.front().tenant_id + "/" + group.front().topic, apply);
      } else {
        apply();
      }
    }
    handed_out += claimed.events.size();
  }
  return handed_out;
}

bool OutboxConsumer::wait_for_events() {
  bool listening = impl_->options.listen;
  if (listening && impl_->options.citus) {
    impl_->read_nodes(impl_->session());
    bool remade = false;
    listening = impl_->listen_on_nodes(&remade);
    if (remade) return false;  // what a broken or a new node's listener would have heard: poll now
  }
  auto period = listening ? impl_->options.idle_poll : impl_->options.idle_poll_without_listen;
  if (std::chrono::steady_clock::now() < impl_->retries_until) period = std::min(period, std::chrono::milliseconds(1000));
  const auto deadline = std::chrono::steady_clock::now() + period;
  while (!impl_->stopping && std::chrono::steady_clock::now() < deadline) {
    if (impl_->options.listen) {
      // 100 ms at a time over the connections listening, so that stop() is seen.
      const auto slice = std::chrono::milliseconds(std::max<std::size_t>(1, 100 / (1 + impl_->listeners.size())));
      bool notified = impl_->session().wait_for_notification(slice);
      for (auto& l : impl_->listeners) {
        if (notified) break;
        try {
          if (l && l->healthy()) notified = l->wait_for_notification(slice);
        } catch (const ConnectionLost&) {
          l.reset();  // made again before the next wait, which polls first
        }
      }
      if (notified) {
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
      impl_->report(e.what());
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
