// The allow-list. A PostgreSQL SQLSTATE is allowed when the fuzzer's own inputs explain it; an
// error that the inputs do not explain (a missing check in our code, a race, a PL/pgSQL RAISE
// without a name) is a finding even when it is clean.
#include "tests/fuzz_sql/verdict.hpp"

#include "core/error.hpp"

namespace idem::fuzz_sql {
namespace {

// Our named errors: "ERR_NAME: ..." with the SQLSTATE the one error table gives ERR_NAME.
bool named_error(const std::string& sqlstate, const std::string& message, std::string& why) {
  if (message.rfind("ERR_", 0) != 0) {
    why = "SQLSTATE " + sqlstate + " without an ERR_ name";
    return false;
  }
  const std::string name = message.substr(0, message.find(':'));
  const auto code = idem::error_code_named(name);
  if (!code) {
    why = "message names " + name + ", which is not in core/error.cpp";
    return false;
  }
  if (sqlstate != idem::error_sqlstate(*code)) {
    why = name + " should carry SQLSTATE " + idem::error_sqlstate(*code) + ", got " + sqlstate;
    return false;
  }
  return true;
}

// The fuzzer's own argument expression: array_fill of a huge element beyond PostgreSQL's 1 GB
// array limit fails while the argument is built (folded by the planner), before the call and
// before its privilege check.
bool argument_too_big(const std::string& s, const std::string& message) {
  return s == "54000" && message.rfind("array size exceeds the maximum allowed", 0) == 0;
}

// A regclass argument's name (or a regclass[] element's) is resolved by its input function
// before the call: no such relation (42P01) or schema (3F000), a name that is not one (42602),
// more than three dotted parts (42601, "improper relation name"), or three naming another
// database (0A000).
bool regclass_literal_refused(const CallFacts& call, const std::string& s, const std::string& message) {
  return call.regclass_argument && (s == "42P01" || s == "3F000" || s == "42602" ||
                                    (s == "42601" && message.rfind("improper relation name", 0) == 0) ||
                                    (s == "0A000" && message.rfind("cross-database references", 0) == 0));
}

// PostgreSQL errors our inputs cause by design.
bool standard_allowed(const CallFacts& call, const std::string& s, const std::string& message) {
  const std::string cls = s.substr(0, 2);
  // 22xxx data exceptions: literals the input functions refuse before any of our code runs
  // (invalid jsonb/uuid/interval/bytea, invalid UTF-8 22021, \u0000 in jsonb 22P05, out-of-range
  // integers 22003, interval overflow 22008), and the documented 2202E for 2-D arrays.
  if (cls == "22") return true;
  if (s == "42501") return true;  // roles without EXECUTE, services reading our tables in arguments
  // 54001: PostgreSQL's recursive jsonb input parser on 100,000 brackets (check_stack_depth).
  // Not 54000 (program_limit_exceeded): a value too big for an index means a length check is
  // missing in our function.
  if (s == "54001") return true;
  if (argument_too_big(s, message)) return true;
  if (s == "57014") return true;  // our statement_timeout (5 s) on a huge payload or a wait
  if (s == "40001" || s == "40P01") return true;  // concurrent sessions: retry, by design
  if (s == "55P03") return true;  // documented: resolve_stuck on a record purge_expired is deleting
  if (s == "25006") return call.read_only;  // documented: a write in a READ ONLY transaction
  if (regclass_literal_refused(call, s, message)) return true;
  // Wrong-type calls: no such function (42883), ambiguous overload (42725), or a cast refused.
  if (call.mistyped && (s == "42883" || s == "42725" || s == "42804" || s == "42846")) return true;
  return false;
}

}  // namespace

Verdict judge(const CallFacts& call, const std::string& sqlstate, const std::string& message,
              std::string& why) {
  why.clear();
  if (sqlstate.size() != 5) {
    why = "no SQLSTATE";
    return Verdict::unexpected;
  }
  if (sqlstate.compare(0, 2, "XX") == 0) {
    // errors.md: idem._raise with a name not in the table, and the boundary probe's 'std'/'int'
    // kinds, raise ERR_INTERNAL on purpose; both are test hooks only a superuser can call.
    if (sqlstate == "XX000" && call.superuser && (call.function == "_raise" || call.function == "_boundary_probe") &&
        message.rfind("ERR_INTERNAL", 0) == 0) {
      return Verdict::hook_internal;
    }
    why = "internal error";
    return Verdict::internal_error;
  }
  if (!call.may_execute) {
    // The body must never run for a role without EXECUTE: only the privilege error, or errors
    // raised while PostgreSQL reads the literals before the call, may come back.
    if (sqlstate == "42501" || sqlstate.compare(0, 2, "22") == 0 || sqlstate == "54001" || sqlstate == "57014" ||
        argument_too_big(sqlstate, message) || (call.mistyped && (sqlstate == "42883" || sqlstate == "42725")) ||
        regclass_literal_refused(call, sqlstate, message)) {
      return Verdict::allowed;
    }
    why = "a role without EXECUTE got " + sqlstate + " (did the body run?)";
    return Verdict::unexpected;
  }
  if (sqlstate.compare(0, 2, "IK") == 0 || message.rfind("ERR_", 0) == 0) {
    return named_error(sqlstate, message, why) ? Verdict::allowed : Verdict::unexpected;
  }
  if (standard_allowed(call, sqlstate, message)) return Verdict::allowed;
  why = "SQLSTATE " + sqlstate + " is neither ours nor on the allow-list";
  return Verdict::unexpected;
}

}  // namespace idem::fuzz_sql
