// Names and SQLSTATEs of our errors. Class "IK" is ours: SQLSTATE classes starting with
// I-Z are reserved for implementation-defined conditions, so no PostgreSQL code collides.
#include "core/error.hpp"

namespace idem {
namespace {

struct ErrorInfo {
  const char* name;
  const char* sqlstate;
};

ErrorInfo info(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::KeyMissing: return {"ERR_IDEMPOTENCY_KEY_MISSING", "IK001"};
    case ErrorCode::KeyInvalid: return {"ERR_IDEMPOTENCY_KEY_INVALID", "IK002"};
    case ErrorCode::InProgress: return {"ERR_IDEMPOTENCY_IN_PROGRESS", "IK003"};
    case ErrorCode::PayloadMismatch: return {"ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", "IK004"};
    case ErrorCode::LeaseLost: return {"ERR_LEASE_LOST", "IK005"};
    case ErrorCode::InvalidTransition: return {"ERR_INVALID_TRANSITION", "IK006"};
    case ErrorCode::NonAtomicStore: return {"ERR_NON_ATOMIC_IDEMPOTENCY_STORE", "IK007"};
    case ErrorCode::BreakingDrift: return {"ERR_BREAKING_IDEMPOTENCY_DRIFT", "IK008"};
    case ErrorCode::NumberPrecision: return {"ERR_PAYLOAD_NUMBER_PRECISION", "IK009"};
    case ErrorCode::JsonInvalid: return {"ERR_PAYLOAD_JSON_INVALID", "IK010"};
    case ErrorCode::JsonPointerInvalid: return {"ERR_JSON_POINTER_INVALID", "IK011"};
    case ErrorCode::ArgumentInvalid: return {"ERR_ARGUMENT_INVALID", "IK012"};
    case ErrorCode::Internal: return {"ERR_INTERNAL", "XX000"};
    case ErrorCode::OutOfMemory: return {"ERR_OUT_OF_MEMORY", "53200"};
  }
  return {"ERR_INTERNAL", "XX000"};
}

}  // namespace

const char* error_name(ErrorCode code) noexcept { return info(code).name; }

std::size_t utf8_clip_length(const char* text, std::size_t length, std::size_t max_bytes) noexcept {
  if (length <= max_bytes) return length;
  std::size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the sequence that was cut.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}
const char* error_sqlstate(ErrorCode code) noexcept { return info(code).sqlstate; }

Error::Error(ErrorCode code, const std::string& message, std::string hint)
    : std::runtime_error(std::string(error_name(code)) + ": " + message),
      code_(code),
      hint_(std::move(hint)) {}

}  // namespace idem
