// idem::Client: the pool and run(); see include/idem/client.hpp and docs/client.md.
#include "idem/client.hpp"

#include <condition_variable>
#include <mutex>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/hash/sha256.hpp"
#include "core/keys/key_validation.hpp"
#include "http.hpp"
#include "pg_session.hpp"

namespace idem {
namespace {

constexpr const char* kAcquire = "idem_client_acquire";
constexpr const char* kComplete = "idem_client_complete";
constexpr const char* kEmit = "idem_client_emit";
constexpr const char* kHandlerKey = "idem_client_handler_key";

const std::vector<pg::Statement> kStatements = {
    {kAcquire,
     "SELECT outcome, handle, attempt, recovery_point, recovery_data::text, response_status,"
     " response_headers::text, response_body, retry_after"
     " FROM idem.acquire($1, $2, $3::bytea, caller => $4, resource => $5, lease => $6::interval,"
     " ttl => $7::interval)"},
    {kComplete, "SELECT idem.complete($1, $2::bigint, $3::integer, $4::jsonb, $5::bytea)"},
    {kEmit, "SELECT idem.emit($1, $2, $3::jsonb, $4)"},
    {kHandlerKey, "SELECT idem.handler_key($1)"},
};

// Columns of kAcquire.
enum AcquireColumn { kOutcome, kHandle, kToken, kRecoveryPoint, kRecoveryData, kStatus, kHeaders, kBody, kRetryAfter };

std::string hex_bytea(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  out.reserve(2 + 2 * bytes.size());
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  throw DatabaseError("ERR_CLIENT_DATABASE", "", "bytea output is not hex");
}

std::string unhex_bytea(const std::string& text) {
  if (text.size() < 2 || text.compare(0, 2, "\\x") != 0 || text.size() % 2 != 0) {
    throw DatabaseError("ERR_CLIENT_DATABASE", "", "bytea output is not in hex format (bytea_output = hex)");
  }
  std::string out;
  out.reserve(text.size() / 2 - 1);
  for (std::size_t i = 2; i < text.size(); i += 2) out += static_cast<char>(hex_digit(text[i]) * 16 + hex_digit(text[i + 1]));
  return out;
}

SqlValue interval(const std::optional<std::chrono::milliseconds>& d) {
  if (!d) return std::nullopt;
  return std::to_string(d->count()) + " milliseconds";
}

// A core error found before anything was sent, as the client's exception.
ClientError client_error_of(const Error& e) {
  std::string detail = e.what();
  const std::string name = error_name(e.code());
  if (detail.rfind(name + ": ", 0) == 0) detail.erase(0, name.size() + 2);
  return ClientError(name, error_sqlstate(e.code()), detail, e.hint());
}

}  // namespace

struct Attempt::State {
  pg::Session* session = nullptr;
  const Request* request = nullptr;
  bool idempotent = false;
  bool resumed = false;
  std::optional<std::string> recovery_point;
  std::optional<std::string> recovery_data;
  std::string handle;
  std::int64_t token = 0;
  std::optional<std::string> handler_key;
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
  if (!state_.handler_key) state_.handler_key = state_.session->exec_prepared(kHandlerKey, {state_.handle}).at(0).at(0);
  return *state_.handler_key;
}

bool Attempt::idempotent() const noexcept { return state_.idempotent; }
bool Attempt::resumed() const noexcept { return state_.resumed; }
const std::optional<std::string>& Attempt::recovery_point() const noexcept { return state_.recovery_point; }
const std::optional<std::string>& Attempt::recovery_data() const noexcept { return state_.recovery_data; }
const std::string& Attempt::handle() const noexcept { return state_.handle; }
std::int64_t Attempt::fencing_token() const noexcept { return state_.token; }
const Request& Attempt::request() const noexcept { return *state_.request; }

struct Client::Impl {
  std::string uri;
  ClientOptions options;
  std::mutex mutex;
  std::condition_variable freed;
  std::vector<std::unique_ptr<pg::Session>> idle;
  std::size_t open = 0;  // idle + checked out
  std::atomic<std::uint64_t> opened{0}, discarded{0}, round_trips{0}, handler_runs{0};

  // A connection checked out of the pool; `fresh` when opened for this checkout.
  struct Lease {
    Impl* pool;
    std::unique_ptr<pg::Session> session;
    bool fresh = false;
    Lease(Impl* p, std::unique_ptr<pg::Session> s, bool f) : pool(p), session(std::move(s)), fresh(f) {}
    Lease(Lease&& o) noexcept : pool(o.pool), session(std::move(o.session)), fresh(o.fresh) {}
    ~Lease() {
      if (session) pool->give_back(std::move(session));
    }
  };

  Lease checkout() {
    std::unique_lock<std::mutex> lock(mutex);
    const auto deadline = std::chrono::steady_clock::now() + options.acquire_timeout;
    for (;;) {
      if (!idle.empty()) {
        auto s = std::move(idle.back());
        idle.pop_back();
        return Lease(this, std::move(s), false);
      }
      if (open < options.pool_size) {
        ++open;
        lock.unlock();
        try {
          auto s = std::make_unique<pg::Session>(uri, kStatements, round_trips);
          ++opened;
          return Lease(this, std::move(s), true);
        } catch (...) {
          lock.lock();
          --open;
          freed.notify_one();
          throw;
        }
      }
      if (freed.wait_until(lock, deadline) == std::cv_status::timeout && idle.empty() && open >= options.pool_size) {
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

  Response run_unguarded(const Request& request, const Handler& handler);
  Response run_idempotent(const Request& request, const hash::Digest& fingerprint, const Handler& handler);
  Response call_handler(pg::Session& session, Attempt::State& state, const Handler& handler);
};

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
  s.round_trips = impl_->round_trips;
  s.handler_runs = impl_->handler_runs;
  return s;
}

Response Client::run(const Request& request, const Handler& handler) {
  const ClientOptions& o = impl_->options;
  // The service's own values: a bad one is its bug (thrown), not the end client's (a 400).
  try {
    keys::validate_scope_part(request.tenant, "tenant", keys::kMaxTenantBytes, false);
    keys::validate_scope_part(request.caller, "caller", keys::kMaxScopePartBytes, true);
    keys::validate_scope_part(request.resource(), "resource", keys::kMaxScopePartBytes, true);
  } catch (const Error& e) {
    throw InvalidArgument(client_error_of(e).name(), error_sqlstate(e.code()), client_error_of(e).detail());
  }
  if (!request.idempotency_key) {
    if (o.allow_missing_key) return impl_->run_unguarded(request, handler);
    return problem_response(KeyMissing("ERR_IDEMPOTENCY_KEY_MISSING", "IK001",
                                       "this operation requires an Idempotency-Key header (a UUIDv4 is ideal)"),
                            o);
  }
  // The end client's values: refused with a 400 before any round trip.
  hash::Digest fingerprint;
  try {
    keys::validate_key(*request.idempotency_key);
    if (request.body.size() > o.max_body_bytes) {
      throw Error(ErrorCode::PayloadTooLarge, "request body is " + std::to_string(request.body.size()) +
                                                  " bytes; the limit is " + std::to_string(o.max_body_bytes));
    }
    // No JSON document canonicalizes to nothing, so an empty body's SHA-256 collides with none.
    fingerprint = request.body.empty() ? hash::sha256("")
                                       : idem::fingerprint_text(request.body, request.fingerprint_exclusions).hash;
  } catch (const Error& e) {
    const ClientError ce = client_error_of(e);
    // Exclusions are the service's configuration: its bug, thrown.
    if (e.code() == ErrorCode::JsonPointerInvalid || e.code() == ErrorCode::ArgumentInvalid) {
      throw InvalidArgument(ce.name(), ce.sqlstate(), ce.detail(), ce.hint());
    }
    return problem_response(ce, o);
  }
  return impl_->run_idempotent(request, fingerprint, handler);
}

Response Client::Impl::call_handler(pg::Session& session, Attempt::State& state, const Handler& handler) {
  Attempt attempt(state);
  Response response;
  try {
    ++handler_runs;
    response = handler(attempt);
    if (state.idempotent) {
      session.exec_prepared(kComplete, {state.handle, std::to_string(state.token), std::to_string(response.status),
                                        http::encode_headers(response.headers), hex_bytea(response.body)});
    }
  } catch (...) {
    session.rollback();  // the acquired key goes with it: the next call runs the handler
    throw;
  }
  session.commit();
  return response;
}

Response Client::Impl::run_unguarded(const Request& request, const Handler& handler) {
  Lease lease = checkout();
  lease.session->begin();
  Attempt::State state;
  state.session = lease.session.get();
  state.request = &request;
  return call_handler(*lease.session, state, handler);
}

Response Client::Impl::run_idempotent(const Request& request, const hash::Digest& fingerprint, const Handler& handler) {
  const std::string hash(reinterpret_cast<const char*>(fingerprint.data()), fingerprint.size());
  const std::vector<SqlValue> params = {request.tenant, *request.idempotency_key, hex_bytea(hash), request.caller,
                                        request.resource(), interval(options.lease), interval(options.ttl)};
  for (;;) {
    Lease lease = checkout();
    pg::Session& session = *lease.session;
    std::vector<SqlRow> rows;
    try {
      session.begin();
      rows = session.exec_prepared(kAcquire, params);
    } catch (const ConnectionLost&) {
      // An idle connection the server closed: nothing ran, take another (a fresh one that fails
      // means the server is unreachable: report it).
      if (lease.fresh) throw;
      continue;
    } catch (...) {
      session.rollback();
      throw;
    }
    const SqlRow& row = rows.at(0);
    const std::string& outcome = row.at(kOutcome).value();
    if (outcome == "acquired" || outcome == "resumed") {
      Attempt::State state;
      state.session = &session;
      state.request = &request;
      state.idempotent = true;
      state.resumed = outcome == "resumed";
      state.recovery_point = row.at(kRecoveryPoint);
      state.recovery_data = row.at(kRecoveryData);
      state.handle = row.at(kHandle).value();
      state.token = std::stoll(row.at(kToken).value());
      return call_handler(session, state, handler);
    }
    // A refusal holds nothing; COMMIT keeps its audit row (idem.mutations).
    session.commit();
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
    if (outcome == "mismatch") return http::mismatch(options);
    throw DatabaseError("ERR_CLIENT_DATABASE", "", "idem.acquire answered an unknown outcome: " + outcome);
  }
}

}  // namespace idem
