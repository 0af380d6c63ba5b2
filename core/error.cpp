// Names and SQLSTATEs of our errors: the one table. Class "IK" is ours: SQLSTATE classes
// starting with I-Z are reserved for implementation-defined conditions, so no PostgreSQL code
// collides. PL/pgSQL raises through idem._raise(name, ...), which reads this table too.
#include "core/error.hpp"

#include <iterator>

namespace idem {
namespace {

struct ErrorInfo {
  ErrorCode code;
  const char* name;
  const char* sqlstate;
};

constexpr ErrorInfo kErrors[] = {
    {ErrorCode::KeyMissing, "ERR_IDEMPOTENCY_KEY_MISSING", "IK001"},
    {ErrorCode::KeyInvalid, "ERR_IDEMPOTENCY_KEY_INVALID", "IK002"},
    {ErrorCode::InProgress, "ERR_IDEMPOTENCY_IN_PROGRESS", "IK003"},
    {ErrorCode::PayloadMismatch, "ERR_IDEMPOTENCY_PAYLOAD_MISMATCH", "IK004"},
    {ErrorCode::LeaseLost, "ERR_LEASE_LOST", "IK005"},
    {ErrorCode::InvalidTransition, "ERR_INVALID_TRANSITION", "IK006"},
    {ErrorCode::NonAtomicStore, "ERR_NON_ATOMIC_IDEMPOTENCY_STORE", "IK007"},
    {ErrorCode::BreakingDrift, "ERR_BREAKING_IDEMPOTENCY_DRIFT", "IK008"},
    {ErrorCode::NumberPrecision, "ERR_PAYLOAD_NUMBER_PRECISION", "IK009"},
    {ErrorCode::JsonInvalid, "ERR_PAYLOAD_JSON_INVALID", "IK010"},
    {ErrorCode::JsonPointerInvalid, "ERR_JSON_POINTER_INVALID", "IK011"},
    {ErrorCode::ArgumentInvalid, "ERR_ARGUMENT_INVALID", "IK012"},
    {ErrorCode::PayloadTooLarge, "ERR_PAYLOAD_TOO_LARGE", "IK013"},
    {ErrorCode::EncodingUnsupported, "ERR_DATABASE_ENCODING_UNSUPPORTED", "IK014"},
    {ErrorCode::SchemaUntrusted, "ERR_SCHEMA_UNTRUSTED", "IK015"},
    {ErrorCode::MachineUnknown, "ERR_MACHINE_UNKNOWN", "IK016"},
    {ErrorCode::StateUnknown, "ERR_STATE_UNKNOWN", "IK017"},
    {ErrorCode::AuditAppendOnly, "ERR_AUDIT_APPEND_ONLY", "IK018"},
    {ErrorCode::OutboxTopicUnknown, "ERR_OUTBOX_TOPIC_UNKNOWN", "IK019"},
    {ErrorCode::OutboxConsumerUnknown, "ERR_OUTBOX_CONSUMER_UNKNOWN", "IK020"},
    {ErrorCode::OutboxEventUnknown, "ERR_OUTBOX_EVENT_UNKNOWN", "IK021"},
    {ErrorCode::OutboxNotClaimed, "ERR_OUTBOX_NOT_CLAIMED", "IK022"},
    {ErrorCode::OutboxClaimTokenMismatch, "ERR_OUTBOX_CLAIM_TOKEN_MISMATCH", "IK023"},
    {ErrorCode::TenantForbidden, "ERR_TENANT_FORBIDDEN", "IK024"},
    {ErrorCode::ConsumerForbidden, "ERR_CONSUMER_FORBIDDEN", "IK025"},
    {ErrorCode::MachineTableUnregistered, "ERR_MACHINE_TABLE_UNREGISTERED", "IK026"},
    {ErrorCode::KeyReused, "ERR_IDEMPOTENCY_KEY_REUSED", "IK027"},
    {ErrorCode::CitusMissing, "ERR_CITUS_MISSING", "IK028"},
    {ErrorCode::TenantNotLocal, "ERR_TENANT_NOT_LOCAL", "IK029"},  // also raised by extension/citus/citus_mode.cpp
    {ErrorCode::Internal, "ERR_INTERNAL", "XX000"},
    {ErrorCode::OutOfMemory, "ERR_OUT_OF_MEMORY", "53200"},
};

const ErrorInfo& info(ErrorCode code) noexcept {
  for (const ErrorInfo& e : kErrors) {
    if (e.code == code) return e;
  }
  return kErrors[std::size(kErrors) - 2];  // ERR_INTERNAL: an enumerator missing from the table
}

}  // namespace

const char* error_name(ErrorCode code) noexcept { return info(code).name; }
const char* error_sqlstate(ErrorCode code) noexcept { return info(code).sqlstate; }

std::optional<ErrorCode> error_code_named(std::string_view name) noexcept {
  for (const ErrorInfo& e : kErrors) {
    if (name == e.name) return e.code;
  }
  return std::nullopt;
}

std::size_t utf8_clip_length(const char* text, std::size_t length, std::size_t max_bytes) noexcept {
  if (length <= max_bytes) return length;
  std::size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the sequence that was cut.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

Error::Error(ErrorCode code, const std::string& message, std::string hint)
    : std::runtime_error(std::string(error_name(code)) + ": " + message),
      code_(code),
      hint_(std::move(hint)) {}

}  // namespace idem
