// idem::Client: the pool and run(); see include/idem/client.hpp and docs/client.md.
#include "idem/client.hpp"

#include <condition_variable>
#include <mutex>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/hash/sha256.hpp"
#include "core/json/member_digests.hpp"
#include "core/keys/scope_digest.hpp"
#include "core/keys/key_validation.hpp"
#include "http.hpp"
#include "pg_session.hpp"
#include "sql_text.hpp"
#include "statements.hpp"

namespace idem {
namespace {

using namespace statements;  // NOLINT: the names of the client's own statements

const char* acquire_statement(const Request& request) {
  return statements::acquire(request.key_scope == Request::KeyScope::route);
}

// A core error found before anything was sent, as the client's exception.
ClientError client_error_of(const Error& e) {
  std::string detail = e.what();
  const std::string name = error_name(e.code());
  if (detail.rfind(name + ": ", 0) == 0) detail.erase(0, name.size() + 2);
  return ClientError(name, error_sqlstate(e.code()), detail, e.hint());
}

}  // namespace

using sql_text::hex_bytea;
using sql_text::interval;
using sql_text::unhex_bytea;

struct Attempt::State {
  pg::Session* session = nullptr;
  const Request* request = nullptr;
  bool idempotent = false;
  bool resumed = false;
  std::optional<std::string> recovery_point;
  std::optional<std::string> recovery_data;
  std::string handle;
  std::int64_t token = 0;
  std::string handler_key;  // given with the lease, never asked for later
  Audit audit;
};

std::vector<SqlRow> Attempt::exec(const std::string& sql, const std::vector<SqlValue>& params) {
  return state_.session->exec(sql, params);
}

std::int64_t Attempt::emit(const std::string& topic, const std::string& payload_json,
                           const std::optional<std::string>& key) {
  const auto rows = state_.session->exec_prepared(kEmit, {state_.request->tenant, topic, payload_json, key});
  return std::stoll(rows.at(0).at(0).value());
}

const std::string& Attempt::handler_key() {
  if (!state_.idempotent) {
    throw InvalidArgument("ERR_ARGUMENT_INVALID", "IK012",
                          "this request has no Idempotency-Key (allow_missing_key): there is no handler key");
  }
  return state_.handler_key;
}

void Attempt::record(const Audit& audit) { state_.audit = audit; }

bool Attempt::idempotent() const noexcept { return state_.idempotent; }
bool Attempt::resumed() const noexcept { return state_.resumed; }
const std::optional<std::string>& Attempt::recovery_point() const noexcept { return state_.recovery_point; }
const std::optional<std::string>& Attempt::recovery_data() const noexcept { return state_.recovery_data; }
const std::string& Attempt::handle() const noexcept { return state_.handle; }
std::int64_t Attempt::fencing_token() const noexcept { return state_.token; }
const Request& Attempt::request() const noexcept { return *state_.request; }

namespace detail {

// The pool and the steps run() and begin() share. Client::Impl is one; a Lease points to it.
struct ClientCore {
  std::string uri;
  ClientOptions options;
  std::mutex mutex;
  std::condition_variable freed;
  std::vector<std::unique_ptr<pg::Session>> idle;
  std::size_t open = 0;  // idle + checked out
  std::atomic<std::uint64_t> opened{0}, discarded{0}, handler_runs{0}, pool_waits{0}, pool_wait_us{0};
  pg::Session::Counters counters;

  // A connection checked out of the pool; `fresh` when opened for this checkout.
  struct Checkout {
    ClientCore* pool;
    std::unique_ptr<pg::Session> session;
    bool fresh = false;
    Checkout(ClientCore* p, std::unique_ptr<pg::Session> s, bool f) : pool(p), session(std::move(s)), fresh(f) {}
    Checkout(Checkout&& o) noexcept : pool(o.pool), session(std::move(o.session)), fresh(o.fresh) {}
    ~Checkout() {
      if (session) pool->give_back(std::move(session));
    }
  };

  Checkout checkout() {
    std::unique_lock<std::mutex> lock(mutex);
    const auto deadline = std::chrono::steady_clock::now() + options.acquire_timeout;
    for (;;) {
      if (!idle.empty()) {
        auto s = std::move(idle.back());
        idle.pop_back();
        // Probed without the pool's lock: it first reads the answer of a COMMIT sent without
        // waiting, which may take as long as that COMMIT does (a synchronous standby away, a
        // slow fsync), and no other thread may wait on that.
        lock.unlock();
        if (s->probe()) return Checkout(this, std::move(s), false);
        s.reset();  // closed by the server while idle: replaced below or by the next checkout
        ++discarded;
        lock.lock();
        --open;
        continue;
      }
      if (open < options.pool_size) {
        ++open;
        lock.unlock();
        try {
          auto s = std::make_unique<pg::Session>(uri, options.citus ? kCitusStatements : kStatements, counters);
          ++opened;
          return Checkout(this, std::move(s), true);
        } catch (...) {
          lock.lock();
          --open;
          freed.notify_one();
          throw;
        }
      }
      const auto waited_from = std::chrono::steady_clock::now();
      const std::cv_status waited = freed.wait_until(lock, deadline);
      ++pool_waits;
      pool_wait_us += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - waited_from).count());
      if (waited == std::cv_status::timeout && idle.empty() && open >= options.pool_size) {
        throw PoolTimeout("ERR_CLIENT_POOL_TIMEOUT", "",
                          "no database connection free within " + std::to_string(options.acquire_timeout.count()) +
                              " ms (pool_size " + std::to_string(options.pool_size) + ")");
      }
    }
  }

  // A connection that broke is closed here, and a new one opened when next needed.
  void give_back(std::unique_ptr<pg::Session> s) {
    const bool healthy = s->healthy();
    if (!healthy) {
      s.reset();
      ++discarded;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (healthy) {
      idle.push_back(std::move(s));
    } else {
      --open;
    }
    freed.notify_one();
  }

  // A checked-out connection on which `first` succeeded. An idle connection the server closed
  // fails there before anything could run (or, for an autocommit acquire, at worst leased the key
  // to nobody: the retry answers 409 until the lease ends): take another. A fresh connection that
  // fails means the server is unreachable: report it.
  template <typename F>
  Checkout checkout_and(F&& first) {
    for (;;) {
      Checkout c = checkout();
      try {
        first(*c.session);
        return c;
      } catch (const ConnectionLost&) {
        if (c.fresh) throw;
      } catch (const OutcomeUnknown&) {
        if (c.fresh) throw;
      }
    }
  }

  // The service's values: a bad one is its bug, thrown (InvalidArgument).
  static void check_scope(const Request& request) {
    try {
      keys::validate_scope_part(request.tenant, "tenant", keys::kMaxTenantBytes, false);
      keys::validate_scope_part(request.caller, "caller", keys::kMaxScopePartBytes, true);
      keys::validate_scope_part(request.resource(), "resource", keys::kMaxScopePartBytes, true);
    } catch (const Error& e) {
      const ClientError ce = client_error_of(e);
      throw InvalidArgument(ce.name(), ce.sqlstate(), ce.detail(), ce.hint());
    }
  }

  // What acquire is sent for a body: its fingerprint and, unless the request opted out, the
  // member digests that name what a reused key changed (salted with the record's scope).
  struct Checked {
    hash::Digest fingerprint;
    std::optional<std::string> members;
  };

  // check_scope, then the end client's values (a 400/413 answer), all before any round trip;
  // the fingerprint when they pass.
  std::variant<Response, Checked> check(const Request& request) const {
    check_scope(request);
    try {
      keys::validate_key(request.idempotency_key);
      if (request.body.size() > options.max_body_bytes) {
        throw Error(ErrorCode::PayloadTooLarge, "request body is " + std::to_string(request.body.size()) +
                                                    " bytes; the limit is " + std::to_string(options.max_body_bytes));
      }
      // No JSON document canonicalizes to nothing, so an empty body's SHA-256 collides with none.
      if (request.body.empty()) return Checked{hash::sha256(""), std::nullopt};
      if (!request.name_differing_fields) return Checked{idem::fingerprint_text(request.body, request.fingerprint_exclusions).hash, std::nullopt};
      const hash::Digest salt = json::member_salt(
          keys::scope_digest(request.tenant, request.caller, request.resource(), *request.idempotency_key));
      auto both = idem::fingerprint_text_with_members(request.body, request.fingerprint_exclusions, salt);
      return Checked{both.fingerprint.hash, std::move(both.members)};
    } catch (const Error& e) {
      const ClientError ce = client_error_of(e);
      // Exclusions are the service's configuration: its bug, thrown.
      if (e.code() == ErrorCode::JsonPointerInvalid || e.code() == ErrorCode::ArgumentInvalid) {
        throw InvalidArgument(ce.name(), ce.sqlstate(), ce.detail(), ce.hint());
      }
      if (e.code() == ErrorCode::KeyMissing && !request.idempotency_key) {
        return problem_response(KeyMissing(ce.name(), ce.sqlstate(),
                                           "this operation requires an Idempotency-Key header (a UUIDv4 is ideal)"),
                                options);
      }
      return problem_response(ce, options);
    }
  }

  std::vector<SqlValue> acquire_params(const Request& request, const Checked& checked) const {
    const std::string hash(reinterpret_cast<const char*>(checked.fingerprint.data()), checked.fingerprint.size());
    return {request.tenant, *request.idempotency_key, hex_bytea(hash), request.caller,
            request.resource(), interval(options.lease), interval(options.ttl), request.mutation_type,
            checked.members ? SqlValue(hex_bytea(*checked.members)) : SqlValue()};
  }

  // The answer to an outcome that is not the caller's to run; nullopt for acquired/resumed.
  std::optional<Response> refusal(const SqlRow& row) const {
    const std::string& outcome = row.at(kOutcome).value();
    if (outcome == "acquired" || outcome == "resumed") return std::nullopt;
    if (outcome == "replay") {
      Response r;
      r.status = std::stoi(row.at(kStatus).value());
      r.headers = http::decode_headers(row.at(kHeaders).value_or("{}"));
      r.body = unhex_bytea(row.at(kBody).value_or("\\x"));
      r.headers.push_back({"X-Cache-Lookup", "IDEMPOTENT-HIT"});
      r.headers.push_back({"Idempotent-Replayed", "true"});
      return r;
    }
    if (outcome == "in_progress") {
      const SqlValue& after = row.at(kRetryAfter);
      return http::in_progress(options, after ? std::stol(*after) : static_cast<long>(options.retry_after.count()));
    }
    if (outcome == "mismatch") return http::mismatch(options, sql_text::text_array(row.at(kKeyReuseDiffers).value_or("{}")));
    if (outcome == "key_reused") return http::key_reused(options, sql_text::text_array(row.at(kKeyReuseDiffers).value_or("{}")));
    throw DatabaseError("ERR_CLIENT_DATABASE", "", "idem.acquire answered an unknown outcome: " + outcome);
  }

  static void fill(Attempt::State& state, const SqlRow& row) {
    state.idempotent = true;
    state.resumed = row.at(kOutcome).value() == "resumed";
    state.recovery_point = row.at(kRecoveryPoint);
    state.recovery_data = row.at(kRecoveryData);
    state.handle = row.at(kHandle).value();
    // The processor key comes with the lease: asked for later, a holder whose lease was taken
    // over could get the next generation's key.
    state.handler_key = row.at(kHandlerKey).value_or("");
    state.token = std::stoll(row.at(kToken).value());
  }

  static std::vector<SqlValue> complete_params(const Attempt::State& a, const Response& response, const Audit& audit) {
    return {a.handle,
            std::to_string(a.token),
            std::to_string(response.status),
            http::encode_headers(response.headers),
            hex_bytea(response.body),
            audit.order_id,
            audit.handler_response,
            audit.local_status,
            audit.handler_called ? "true" : "false"};
  }

  // Calls the handler in the open transaction, then completes (for a keyed attempt) and commits
  // in one round trip; on any exception rolls back and rethrows.
  Response call_handler(pg::Session& session, Attempt::State& state, const std::function<Response(Attempt&)>& handler) {
    Attempt attempt(state);
    Response response;
    try {
      ++handler_runs;
      response = handler(attempt);
    } catch (...) {
      session.rollback();  // an acquired key goes with it: the next call runs the handler
      throw;
    }
    if (!state.idempotent) {
      session.commit();
      return response;
    }
    try {
      session.execute_and_commit(kComplete, tenant_first(options.citus, state.request->tenant,
                                                         complete_params(state, response, state.audit)));
    } catch (const OutcomeUnknown&) {
      throw;
    } catch (...) {
      session.rollback();  // complete refused (e.g. LeaseLost): its COMMIT never ran
      throw;
    }
    return response;
  }
};

}  // namespace detail

struct Client::Impl : detail::ClientCore {};

Client::Client(std::string uri, ClientOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->uri = std::move(uri);
  impl_->options = std::move(options);
  if (impl_->options.pool_size == 0) impl_->options.pool_size = 1;
}

Client::~Client() = default;

const ClientOptions& Client::options() const noexcept { return impl_->options; }

ClientStats Client::stats() const {
  ClientStats s;
  s.connections_opened = impl_->opened;
  s.connections_discarded = impl_->discarded;
  s.round_trips = impl_->counters.round_trips;
  s.deferred_commits = impl_->counters.deferred_commits;
  s.deferred_commit_failures = impl_->counters.deferred_commit_failures;
  s.handler_runs = impl_->handler_runs;
  s.pool_waits = impl_->pool_waits;
  s.pool_wait_us = impl_->pool_wait_us;
  return s;
}

Response Client::run(const Request& request, const Handler& handler) {
  // A serialization failure or deadlock rolled the whole transaction back (the key with it), so
  // the request runs again from the start, a few times, before the error reaches the caller.
  for (int attempt = 1;; ++attempt) {
    try {
      return run_once(request, handler);
    } catch (const ClientError& e) {
      const bool retryable = e.sqlstate() == "40001" || e.sqlstate() == "40P01";
      if (!retryable || attempt >= kRunAttempts) throw;
    }
  }
}

Response Client::run_once(const Request& request, const Handler& handler) {
  Impl& core = *impl_;
  if (!request.idempotency_key && core.options.allow_missing_key) {
    // Fail open only when told: a plain transaction, no record, no replay.
    detail::ClientCore::check_scope(request);
    auto c = core.checkout_and([](pg::Session& s) { s.begin(); });
    Attempt::State state;
    state.session = c.session.get();
    state.request = &request;
    return core.call_handler(*c.session, state, handler);
  }
  const auto checked = core.check(request);
  if (const auto* answer = std::get_if<Response>(&checked)) return *answer;
  const auto params = core.acquire_params(request, std::get<detail::ClientCore::Checked>(checked));
  std::vector<SqlRow> rows;
  // BEGIN rides with acquire: one round trip.
  auto c = core.checkout_and([&](pg::Session& s) {
    try {
      rows = s.begin_and_execute(acquire_statement(request), params);
    } catch (const ConnectionLost&) {
      throw;
    } catch (...) {
      s.rollback();
      throw;
    }
  });
  const SqlRow& row = rows.at(0);
  if (auto answer = core.refusal(row)) {
    // A refusal holds nothing and its answer is already known; the COMMIT only keeps its audit
    // row (idem.mutations), so the caller does not wait for it.
    c.session->commit_without_waiting();
    return *answer;
  }
  Attempt::State state;
  state.session = c.session.get();
  state.request = &request;
  detail::ClientCore::fill(state, row);
  return core.call_handler(*c.session, state, handler);
}

struct Lease::State {
  detail::ClientCore* core = nullptr;
  Request request;
  Attempt::State attempt;  // its session is set only while a step runs
};

Lease::Lease(std::unique_ptr<State> state) : state_(std::move(state)) {}
Lease::Lease(Lease&&) noexcept = default;
Lease& Lease::operator=(Lease&&) noexcept = default;
Lease::~Lease() = default;

bool Lease::resumed() const noexcept { return state_->attempt.resumed; }
const std::optional<std::string>& Lease::recovery_point() const noexcept { return state_->attempt.recovery_point; }
const std::optional<std::string>& Lease::recovery_data() const noexcept { return state_->attempt.recovery_data; }
const std::string& Lease::handle() const noexcept { return state_->attempt.handle; }
std::int64_t Lease::fencing_token() const noexcept { return state_->attempt.token; }

const std::string& Lease::handler_key() const noexcept { return state_->attempt.handler_key; }

void Lease::checkpoint(const std::string& recovery_point, const std::optional<std::string>& data_json,
                       bool handler_called) {
  const Attempt::State& a = state_->attempt;
  // Running it again with the same token only records the same checkpoint again: retried on
  // another connection when a pooled one turns out dead.
  auto c = state_->core->checkout_and([&](pg::Session& s) {
    s.exec_prepared_autocommit(kCheckpoint, tenant_first(state_->core->options.citus, state_->request.tenant,
                                                         {a.handle, std::to_string(a.token), recovery_point, data_json,
                                                          handler_called ? "true" : "false"}));
  });
  state_->attempt.recovery_point = recovery_point;
  state_->attempt.recovery_data = data_json;
}

Response Lease::complete(const Response& response, const Audit& audit) {
  auto c = state_->core->checkout();
  c.session->exec_prepared_autocommit(kComplete, tenant_first(state_->core->options.citus, state_->request.tenant,
                                                             detail::ClientCore::complete_params(state_->attempt, response, audit)));
  return response;
}

Response Lease::complete(const std::function<Response(Attempt&)>& handler) {
  auto c = state_->core->checkout_and([](pg::Session& s) { s.begin(); });
  state_->attempt.session = c.session.get();
  state_->attempt.request = &state_->request;
  struct Detach {
    Attempt::State& a;
    ~Detach() { a.session = nullptr; }
  } detach{state_->attempt};
  return state_->core->call_handler(*c.session, state_->attempt, handler);
}

void Lease::release(const std::string& error, std::optional<bool> handler_called) {
  const Attempt::State& a = state_->attempt;
  auto c = state_->core->checkout();
  const SqlValue called = handler_called ? SqlValue(*handler_called ? "true" : "false") : SqlValue();
  c.session->exec_prepared_autocommit(kRelease, tenant_first(state_->core->options.citus, state_->request.tenant,
                                                            {a.handle, std::to_string(a.token), error, called}));
}

std::vector<SqlRow> Client::query(const std::string& sql, const std::vector<SqlValue>& params) {
  std::vector<SqlRow> rows;
  auto c = impl_->checkout_and([&](pg::Session& s) { rows = s.exec(sql, params); });
  return rows;
}

std::variant<Lease, Response> Client::begin(const Request& request) {
  Impl& core = *impl_;
  const auto checked = core.check(request);
  if (const auto* answer = std::get_if<Response>(&checked)) return *answer;
  const auto params = core.acquire_params(request, std::get<detail::ClientCore::Checked>(checked));
  std::vector<SqlRow> rows;
  // Outside a transaction block: the lease (or the refusal's audit row) commits with the statement.
  auto c = core.checkout_and([&](pg::Session& s) { rows = s.exec_prepared_autocommit(acquire_statement(request), params); });
  const SqlRow& row = rows.at(0);
  if (auto answer = core.refusal(row)) return *answer;
  auto state = std::make_unique<Lease::State>();
  state->core = &core;
  state->request = request;
  detail::ClientCore::fill(state->attempt, row);
  return Lease(std::move(state));
}

}  // namespace idem
