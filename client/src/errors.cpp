// SQLSTATE -> exception class, with names from core's one error table (core/error.cpp).
#include "idem/errors.hpp"

#include "core/error.hpp"

namespace idem {
namespace {

// Our name for a SQLSTATE of core's table, or "" (a PostgreSQL code).
std::string name_of(const std::string& sqlstate) {
  for (int c = 0; c <= static_cast<int>(ErrorCode::OutOfMemory); ++c) {
    const auto code = static_cast<ErrorCode>(c);
    if (sqlstate == error_sqlstate(code)) return error_name(code);
  }
  return "";
}

}  // namespace

ClientError::ClientError(std::string name, std::string sqlstate, std::string detail, std::string hint)
    : std::runtime_error(name + ": " + detail),
      name_(std::move(name)),
      sqlstate_(std::move(sqlstate)),
      detail_(std::move(detail)),
      hint_(std::move(hint)) {}

OutcomeUnknown::OutcomeUnknown(std::string cause)
    : ClientError("ERR_CLIENT_OUTCOME_UNKNOWN", "08007", "outcome unknown — retry with the same key",
                  "The connection broke while COMMIT was on its way: the transaction may have committed. "
                  "Retry the same request with the same Idempotency-Key; it replays or runs once."),
      cause_(std::move(cause)) {}

void throw_for_sqlstate(const std::string& sqlstate, const std::string& message, const std::string& hint) {
  std::string name = name_of(sqlstate);
  std::string detail = message;
  if (!name.empty() && detail.rfind(name + ": ", 0) == 0) detail.erase(0, name.size() + 2);
  if (name.empty()) name = "SQLSTATE_" + sqlstate;
  if (sqlstate == "IK001") throw KeyMissing(name, sqlstate, detail, hint);
  if (sqlstate == "IK002") throw KeyInvalid(name, sqlstate, detail, hint);
  if (sqlstate == "IK003") throw InProgress(name, sqlstate, detail, hint);
  if (sqlstate == "IK004") throw PayloadMismatch(name, sqlstate, detail, hint);
  if (sqlstate == "IK005") throw LeaseLost(name, sqlstate, detail, hint);
  if (sqlstate == "IK006") throw InvalidTransition(name, sqlstate, detail, hint);
  if (sqlstate == "IK007") throw NonAtomicStore(name, sqlstate, detail, hint);
  if (sqlstate == "IK009" || sqlstate == "IK010" || sqlstate == "IK013") {
    throw InvalidPayload(name, sqlstate, detail, hint);
  }
  if (sqlstate == "IK011" || sqlstate == "IK012") throw InvalidArgument(name, sqlstate, detail, hint);
  if (sqlstate == "IK024") throw TenantForbidden(name, sqlstate, detail, hint);
  throw DatabaseError(name, sqlstate, detail, hint);
}

}  // namespace idem
