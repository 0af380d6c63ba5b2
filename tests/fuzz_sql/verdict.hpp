// Which errors a fuzzed call may end with. Ours: an SQLSTATE of class IK whose message starts
// with the stable name core/error.cpp gives that SQLSTATE. PostgreSQL's: an allow-list, each entry
// with the reason it is legitimate (verdict.cpp). Everything else is a finding.
#pragma once

#include <string>

namespace idem::fuzz_sql {

struct CallFacts {
  std::string function;  // proname, e.g. "_raise"
  bool superuser = false;
  bool may_execute = true;  // the role holds EXECUTE on the function
  bool mistyped = false;    // an argument of the wrong type or count was passed on purpose
  bool read_only = false;   // the transaction is READ ONLY
  bool regclass_argument = false;  // a regclass argument: PostgreSQL resolves the name before the call
};

enum class Verdict {
  allowed,         // a named error of ours, or an allowed PostgreSQL error
  hook_internal,   // ERR_INTERNAL from a superuser's call of a test hook that raises it by design
  internal_error,  // SQLSTATE class XX (XX000 internal_error, XX001 data_corrupted, ...)
  unexpected,      // anything else
};

// message: the primary message, without "ERROR:  ".
Verdict judge(const CallFacts& call, const std::string& sqlstate, const std::string& message,
              std::string& why);

}  // namespace idem::fuzz_sql
