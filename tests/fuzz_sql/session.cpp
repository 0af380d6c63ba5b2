// A session's loop: pick a function the role may (or, on purpose, may not) execute, make its
// arguments, run it, judge the outcome, keep what came back for the other sessions.
#include "tests/fuzz_sql/session.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include <pqxx/pqxx>

#include "tests/fuzz_sql/harvest.hpp"
#include "tests/fuzz_sql/inspector.hpp"
#include "tests/fuzz_sql/verdict.hpp"

namespace idem::fuzz_sql {
namespace {

// Internal functions a superuser calls too: every one the SQL labels IMMUTABLE or STABLE, and
// these volatile ones that write no table (key locks, the retired-generation probe, the holder
// lookup, the test hooks). The volatile writers (_acquire, _audit, _outbox_write, ...) are
// called only by the other roles, which must be refused: a superuser calling them directly
// writes rows that bypass every check by design, which proves nothing.
const std::set<std::string> kSuperuserVolatileInternals = {
    "_boundary_probe", "_raise",        "_try_lock_key",  "_wait_lock_key",     "_unlock_key",
    "_key_locked_by_me", "_holder_row", "_retired_generation_now", "_wait_for_key_lock"};

// The columns worth keeping from a row-returning call (harvest.cpp); the rest (payloads) stay on
// the server.
const std::set<std::string> kHarvested = {"outcome", "handle", "attempt", "event_id", "token", "order_id"};

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

std::string first_line(const std::string& what) {
  std::string m = what;
  if (m.rfind("ERROR:  ", 0) == 0) m = m.substr(8);
  return m.substr(0, m.find('\n'));
}

}  // namespace

struct Session::Impl {
  std::unique_ptr<pqxx::connection> conn;
  std::unique_ptr<pqxx::nontransaction> tx;
  std::unique_ptr<Inspector> inspector;
};

Session::Session(int index, Shared& shared)
    : index_(index),
      shared_(shared),
      rng_(shared.options.seed * 1000003ULL + static_cast<std::uint64_t>(index)),
      values_(rng_, shared.pools),
      impl_(std::make_unique<Impl>()) {}

Session::~Session() = default;

bool Session::connect() {
  impl_->tx.reset();
  impl_->conn.reset();
  role_ = shared_.roles[rng_.below(shared_.roles.size())];
  transactions_left_ = 50 + static_cast<int>(rng_.below(250));
  try {
    impl_->conn = std::make_unique<pqxx::connection>(shared_.options.conninfo(role_.user));
    impl_->tx = std::make_unique<pqxx::nontransaction>(*impl_->conn);
    // Warnings (e.g. unlocking a key lock not held) are not findings; keep stderr for the report.
    impl_->tx->exec("SET client_min_messages = error; SET statement_timeout = " +
                    std::to_string(shared_.options.statement_timeout_ms));
    backend_pid_ = impl_->conn->backendpid();
    if (!impl_->inspector) {
      impl_->inspector = std::make_unique<Inspector>(shared_.options.conninfo("postgres"), shared_.catalog.tables);
    }
    return true;
  } catch (const std::exception&) {
    impl_->tx.reset();
    impl_->conn.reset();
    return false;
  }
}

bool Session::may_execute(const Function& fn) const {
  // "COMMIT" stands for the transaction's end in the histogram; every role may commit.
  return role_.superuser || fn.signature == "COMMIT" || fn.executors.count(role_.user) > 0;
}

const Function& Session::pick_function() {
  const auto& all = shared_.catalog.functions;
  const bool refuse = rng_.chance(5);
  for (;;) {
    const Function& fn = all[rng_.below(all.size())];
    if (role_.superuser) {
      if (fn.internal() && fn.volatility == 'v' && kSuperuserVolatileInternals.count(fn.name) == 0) continue;
      return fn;
    }
    // Mostly what the role may call; a fifth of the time anything, which must be refused.
    if (may_execute(fn) || refuse) return fn;
  }
}

Session::Call Session::prepare(const Function& fn) {
  Call call;
  call.fn = &fn;
  values_.begin_call();
  std::size_t n = fn.args.size();
  if (fn.defaults > 0 && rng_.chance(3)) n -= rng_.below(static_cast<std::size_t>(fn.defaults) + 1);
  // A third of the calls are all plausible, half have one hostile argument, the rest are hostile
  // throughout: one bad argument at a time gets past the checks of the others.
  const std::size_t mode = rng_.below(6);
  const std::size_t hostile_one = n > 0 ? rng_.below(n) : 0;
  std::string list;
  for (std::size_t i = 0; i < n; ++i) {
    const bool hostile = mode == 5 || (mode >= 2 && i == hostile_one);
    call.arg_names.push_back(fn.arg_names[i]);
    call.args.push_back(values_.make(fn.args[i], fn.arg_names[i], hostile));
  }
  if (rng_.chance(30)) {
    call.mistyped = true;
    switch (rng_.below(3)) {
      case 0:
        if (n > 0) {
          const std::size_t i = rng_.below(n);
          call.args[i] = {values_.wrong_type(fn.args[i]), std::nullopt};
          break;
        }
        [[fallthrough]];
      case 1: call.args.push_back({"CAST(1 AS integer)", std::nullopt}); break;
      default:
        if (!call.args.empty()) call.args.pop_back();
        break;
    }
  }
  for (std::size_t i = 0; i < call.args.size(); ++i) list += (i ? ", " : "") + call.args[i].sql;
  const std::string invocation = "idem." + fn.name + "(" + list + ")";
  if (fn.returns_rows) {
    std::string columns;
    for (const auto& c : fn.columns) {
      if (kHarvested.count(c)) columns += (columns.empty() ? "" : ", ") + c;
    }
    call.sql = "SELECT " + (columns.empty() ? std::string("count(*)") : columns) + " FROM " + invocation;
  } else {
    call.sql = "SELECT " + invocation;
  }
  return call;
}

// Runs `sql`; for a call (harvest_into) keeps what the pools want from a success.
Session::Outcome Session::exec(const std::string& sql, bool harvest_into, const Call* call) {
  Outcome out;
  try {
    const pqxx::result r = impl_->tx->exec(sql);
    if (harvest_into && call) harvest(call->fn->name, call->arg_names, call->args, r, shared_.pools);
  } catch (const pqxx::broken_connection& e) {
    out.broken = true;
    out.sqlstate = "08006";
    out.message = first_line(e.what());
  } catch (const pqxx::in_doubt_error& e) {
    out.broken = true;
    out.sqlstate = "08006";
    out.message = first_line(e.what());
  } catch (const pqxx::sql_error& e) {
    out.sqlstate = e.sqlstate();
    // libpqxx 6.4 throws insufficient_privilege without its SQLSTATE.
    if (out.sqlstate.empty() && dynamic_cast<const pqxx::insufficient_privilege*>(&e)) out.sqlstate = "42501";
    if (out.sqlstate.empty()) out.sqlstate = "(none)";
    out.message = first_line(e.what());
  } catch (const pqxx::serialization_failure& e) {  // not sql_error in libpqxx 6.4
    out.sqlstate = "40001";
    out.message = first_line(e.what());
  } catch (const pqxx::deadlock_detected& e) {
    out.sqlstate = "40P01";
    out.message = first_line(e.what());
  } catch (const pqxx::statement_completion_unknown& e) {
    out.broken = true;
    out.sqlstate = "40003";
    out.message = first_line(e.what());
  } catch (const pqxx::transaction_rollback& e) {
    out.sqlstate = "40000";
    out.message = first_line(e.what());
  }
  // The server ending the session (57P01..57P03) is a lost connection too.
  if (out.sqlstate.rfind("57P", 0) == 0 || out.sqlstate.rfind("08", 0) == 0) out.broken = true;
  shared_.stats.trace(index_, sql, out.sqlstate.empty() ? "ok" : out.sqlstate + " " + out.message);
  return out;
}

// PostgreSQL folds a STRICT function with a constant NULL argument to NULL while planning, before
// it checks EXECUTE: such a call "succeeds" for any role, and none of our code runs.
static bool folded_to_null(const Function& fn, const std::vector<Value>& args) {
  if (!fn.strict) return false;
  for (const auto& a : args) {
    if (a.sql.rfind("CAST(NULL ", 0) == 0 || a.sql == "NULL") return true;
  }
  return false;
}

void Session::account(const Call& call, const Outcome& outcome, bool read_only) {
  shared_.stats.record(call.fn->signature, outcome.sqlstate);
  if (outcome.sqlstate.empty()) {
    if (may_execute(*call.fn) || folded_to_null(*call.fn, call.args)) return;
    Finding f;
    f.kind = "privilege";
    f.function = call.fn->signature;
    f.role = role_.user;
    f.why = "succeeded for a role without EXECUTE";
    f.call = clip_sql(call.sql);
    shared_.stats.finding(std::move(f), call.sql);
    return;
  }
  CallFacts facts{call.fn->name, role_.superuser, may_execute(*call.fn), call.mistyped, read_only,
                  std::any_of(call.fn->args.begin(), call.fn->args.end(), [](const Type& t) {
                    return t.base == "regclass" || (t.element && t.element->base == "regclass");  // regclass[] too
                  })};
  std::string why;
  const Verdict v = judge(facts, outcome.sqlstate, outcome.message, why);
  if (v == Verdict::allowed) return;
  if (v == Verdict::hook_internal) {
    shared_.stats.hook_internal();
    return;
  }
  Finding f;
  f.kind = v == Verdict::internal_error ? "XX000" : "unexpected";
  f.function = call.fn->signature;
  f.role = role_.user;
  f.sqlstate = outcome.sqlstate;
  f.message = outcome.message;
  f.why = why;
  f.call = clip_sql(call.sql);
  shared_.stats.finding(std::move(f), call.sql);
}

void Session::lost_connection(const Call* call, const Outcome& outcome) {
  Finding f;
  f.kind = "crash";
  f.function = call ? call->fn->signature : "(between calls)";
  f.role = role_.user + " (backend pid " + std::to_string(backend_pid_) + ")";
  f.sqlstate = outcome.sqlstate;
  f.message = outcome.message;
  f.why = "the connection was lost while this statement ran";
  f.call = call ? clip_sql(call->sql) : "";
  shared_.stats.finding(std::move(f), call ? call->sql : "");
  // The server restarts its backends after a crash: wait for it, then carry on fuzzing.
  for (int attempt = 0; attempt < 60 && !shared_.stop; ++attempt) {
    impl_->inspector.reset();
    if (connect()) return;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  shared_.stop = true;
}

std::string Session::session_state() {
  const pqxx::result r = impl_->tx->exec(
      "SELECT current_user || '/' || session_user || '/' || pg_catalog.current_setting('search_path') || '/' ||"
      " coalesce((SELECT string_agg(name || '=' || setting, ',' ORDER BY name) FROM pg_catalog.pg_settings"
      "   WHERE name IN ('synchronous_commit', 'statement_timeout', 'lock_timeout', 'transaction_read_only',"
      "     'default_transaction_isolation', 'idle_in_transaction_session_timeout', 'client_min_messages')"
      "      OR (name LIKE 'idem.%' AND source <> 'default')), '')");
  return r[0][0].c_str();
}

void Session::ordinary_transaction() {
  static const char* const kIsolation[] = {"READ COMMITTED", "READ COMMITTED", "READ COMMITTED",
                                           "REPEATABLE READ", "SERIALIZABLE"};
  const bool read_only = rng_.chance(20);
  const std::string begin = std::string("BEGIN ISOLATION LEVEL ") + rng_.pick(kIsolation) + (read_only ? " READ ONLY" : "");
  const int calls = rng_.chance(2) ? 1 : 2 + static_cast<int>(rng_.below(2));
  shared_.gate.enter_shared();
  struct Leave {
    Gate& g;
    ~Leave() { g.leave_shared(); }
  } leave{shared_.gate};
  for (int k = 0; k < calls; ++k) {
    const Call call = prepare(pick_function());
    // One message per call: BEGIN (first call) or a savepoint, then the call.
    const Outcome out = exec((k == 0 ? begin : std::string("SAVEPOINT s")) + "; " + call.sql, true, &call);
    if (out.broken) {
      account(call, out, read_only);
      lost_connection(&call, out);
      return;
    }
    account(call, out, read_only);
    if (!out.sqlstate.empty()) {
      if (k == 0) {
        exec("ROLLBACK", false, nullptr);
        return;
      }
      // A statement the server cannot read (invalid UTF-8, a syntax error) fails the whole
      // message before its SAVEPOINT ran: then the transaction is lost, roll it back.
      const Outcome back = exec("ROLLBACK TO SAVEPOINT s", false, nullptr);
      if (back.broken) return lost_connection(nullptr, back);
      if (!back.sqlstate.empty()) {
        exec("ROLLBACK", false, nullptr);
        return;
      }
    }
  }
  static const Function commit_fn = [] {
    Function f;
    f.name = "COMMIT";
    f.signature = "COMMIT";
    return f;
  }();
  const bool commit = !rng_.chance(10);
  const Outcome end = exec(commit ? "COMMIT" : "ROLLBACK", false, nullptr);
  if (commit) {
    Call c;
    c.fn = &commit_fn;
    c.sql = "COMMIT";
    account(c, end, read_only);
  }
  if (end.broken) lost_connection(nullptr, end);
}

std::int64_t Session::checked_call() {
  shared_.gate.enter_exclusive();
  struct Leave {
    Gate& g;
    ~Leave() { g.leave_exclusive(); }
  } leave{shared_.gate};
  const Call call = prepare(pick_function());
  std::map<std::string, std::string> before;
  std::string state_before;
  std::int64_t digests_ms = now_ms();
  try {
    before = impl_->inspector->digest();
    state_before = session_state();
  } catch (const std::exception&) {
    return 0;  // the next call finds out what happened to the connection
  }
  digests_ms = now_ms() - digests_ms;
  const Outcome out = exec("BEGIN; " + call.sql, true, &call);
  account(call, out, false);
  if (out.broken) {
    lost_connection(&call, out);
    return digests_ms;
  }
  if (out.sqlstate.empty()) {
    const Outcome end = exec(rng_.chance(2) ? "COMMIT" : "ROLLBACK", false, nullptr);
    if (end.broken) lost_connection(nullptr, end);
    return digests_ms;
  }
  const Outcome end = exec("ROLLBACK", false, nullptr);
  if (end.broken) {
    lost_connection(nullptr, end);
    return digests_ms;
  }
  shared_.stats.checked_refusal();
  std::vector<std::string> changes;
  try {
    const std::int64_t start = now_ms();
    changes = digest_changes(before, impl_->inspector->digest());
    digests_ms += now_ms() - start;
    const std::string state_after = session_state();
    if (state_after != state_before) changes.push_back("session: " + state_before + " -> " + state_after);
    for (const auto& lock : impl_->inspector->locks_of(backend_pid_)) changes.push_back("lock still held: " + lock);
  } catch (const std::exception& e) {
    changes.push_back(std::string("could not look after the call: ") + e.what());
  }
  if (changes.empty()) return digests_ms;
  Finding f;
  f.kind = "state changed";
  f.function = call.fn->signature;
  f.role = role_.user;
  f.sqlstate = out.sqlstate;
  f.message = out.message;
  for (const auto& c : changes) f.why += (f.why.empty() ? "" : "; ") + c;
  f.call = clip_sql(call.sql);
  shared_.stats.finding(std::move(f), call.sql);
  return digests_ms;
}

void Session::run() {
  while (!shared_.stop && !connect()) std::this_thread::sleep_for(std::chrono::seconds(1));
  while (!shared_.stop) {
    if (--transactions_left_ <= 0 && !connect()) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    std::int64_t due = shared_.next_check_ms.load();
    const std::int64_t now = now_ms();
    if (now >= due && shared_.next_check_ms.compare_exchange_strong(due, now + shared_.options.check_interval_ms)) {
      // The other sessions wait while a checked call runs: keep them busy at least 90% of the
      // time, however long the digests take as the tables grow (the call itself may take up to
      // statement_timeout; that is rare and does not count).
      const std::int64_t digests_ms = checked_call();
      const std::int64_t later = now_ms() + std::min<std::int64_t>(10 * digests_ms, 5000);
      std::int64_t next = shared_.next_check_ms.load();
      while (next < later && !shared_.next_check_ms.compare_exchange_weak(next, later)) {
      }
    } else {
      ordinary_transaction();
    }
  }
}

}  // namespace idem::fuzz_sql
