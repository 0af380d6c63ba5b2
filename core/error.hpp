// The one error type of core/ and the extension: a stable error name, its SQLSTATE, and text.
// Every name listed here is part of the public contract (docs/errors.md) and has a regression test.
#pragma once

#include <stdexcept>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace idem {

enum class ErrorCode {
  KeyMissing,          // ERR_IDEMPOTENCY_KEY_MISSING
  KeyInvalid,          // ERR_IDEMPOTENCY_KEY_INVALID
  InProgress,          // ERR_IDEMPOTENCY_IN_PROGRESS
  PayloadMismatch,     // ERR_IDEMPOTENCY_PAYLOAD_MISMATCH
  LeaseLost,           // ERR_LEASE_LOST
  InvalidTransition,   // ERR_INVALID_TRANSITION
  NonAtomicStore,      // ERR_NON_ATOMIC_IDEMPOTENCY_STORE
  BreakingDrift,       // ERR_BREAKING_IDEMPOTENCY_DRIFT
  NumberPrecision,     // ERR_PAYLOAD_NUMBER_PRECISION
  JsonInvalid,         // ERR_PAYLOAD_JSON_INVALID
  JsonPointerInvalid,  // ERR_JSON_POINTER_INVALID
  ArgumentInvalid,     // ERR_ARGUMENT_INVALID
  PayloadTooLarge,     // ERR_PAYLOAD_TOO_LARGE (over idem.max_payload_bytes)
  EncodingUnsupported, // ERR_DATABASE_ENCODING_UNSUPPORTED (fingerprints need a UTF-8 database)
  SchemaUntrusted,     // ERR_SCHEMA_UNTRUSTED (schema idem owned by another role, or holding strangers)
  MachineUnknown,      // ERR_MACHINE_UNKNOWN (no state machine of that name)
  StateUnknown,        // ERR_STATE_UNKNOWN (the machine has no such state)
  AuditAppendOnly,     // ERR_AUDIT_APPEND_ONLY (UPDATE/DELETE/TRUNCATE of the audit trail)
  OutboxTopicUnknown,   // ERR_OUTBOX_TOPIC_UNKNOWN (no such topic, or the consumer does not subscribe to it)
  OutboxConsumerUnknown,  // ERR_OUTBOX_CONSUMER_UNKNOWN (no outbox consumer of that name)
  OutboxEventUnknown,   // ERR_OUTBOX_EVENT_UNKNOWN (never emitted, rolled back, or purged)
  OutboxNotClaimed,     // ERR_OUTBOX_NOT_CLAIMED (not in an open claim of this consumer)
  OutboxClaimTokenMismatch,  // ERR_OUTBOX_CLAIM_TOKEN_MISMATCH (the claim was taken over, or a wrong token)
  TenantForbidden,           // ERR_TENANT_FORBIDDEN (a role bound to other tenants)
  ConsumerForbidden,         // ERR_CONSUMER_FORBIDDEN (a role bound to other outbox consumers)
  MachineTableUnregistered,  // ERR_MACHINE_TABLE_UNREGISTERED (enforce_transitions on a table no operator registered)
  KeyReused,                 // ERR_IDEMPOTENCY_KEY_REUSED (the tenant's key first used by another caller or route)
  CitusMissing,              // ERR_CITUS_MISSING (idem.citus_distribute without Citus in the database)
  TenantNotLocal,            // ERR_TENANT_NOT_LOCAL (on Citus: the tenant's shard is on another node)
  Internal,            // ERR_INTERNAL (a bug: a C++ exception we did not expect)
  OutOfMemory,         // ERR_OUT_OF_MEMORY
};

// Stable name, e.g. "ERR_LEASE_LOST".
const char* error_name(ErrorCode code) noexcept;
// Five-character SQLSTATE, e.g. "IK005".
const char* error_sqlstate(ErrorCode code) noexcept;
// The code whose stable name is `name`, or nullopt: PL/pgSQL raises by name through this table.
std::optional<ErrorCode> error_code_named(std::string_view name) noexcept;

// The longest prefix of `text` of at most `max_bytes` bytes that does not cut a UTF-8 sequence,
// so a clipped message stays valid in every client encoding.
std::size_t utf8_clip_length(const char* text, std::size_t length, std::size_t max_bytes) noexcept;

class Error : public std::runtime_error {
 public:
  // message: what went wrong, without the error name (what() prefixes it).
  // hint: what the caller should do about it (may be empty).
  Error(ErrorCode code, const std::string& message, std::string hint = {});

  ErrorCode code() const noexcept { return code_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  ErrorCode code_;
  std::string hint_;
};

// An error PostgreSQL itself defines, raised with its own SQLSTATE, message, detail and error
// fields (a row that breaks one of our tables' invariants is a check_violation, 23514, naming
// the schema, table and constraint, as when they were CHECKs).
class StandardError : public std::runtime_error {
 public:
  struct Fields {
    std::string detail, schema, table, constraint;
  };
  StandardError(const char* sqlstate, const std::string& message, Fields fields = {})
      : std::runtime_error(message), fields_(std::move(fields)) {
    std::memcpy(sqlstate_, sqlstate, 5);
    sqlstate_[5] = '\0';
  }
  const char* sqlstate() const noexcept { return sqlstate_; }
  const Fields& fields() const noexcept { return fields_; }

 private:
  char sqlstate_[6];
  Fields fields_;
};

}  // namespace idem
