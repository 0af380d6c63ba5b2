// Every error name and SQLSTATE is part of the contract: pinned here, listed in docs/errors.md.
#include "core/error.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace idem {
namespace {

struct Expected {
  ErrorCode code;
  const char* name;
  const char* sqlstate;
};

constexpr Expected kContract[] = {
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
    {ErrorCode::TenantNotLocal, "ERR_TENANT_NOT_LOCAL", "IK029"},
    {ErrorCode::Internal, "ERR_INTERNAL", "XX000"},
    {ErrorCode::OutOfMemory, "ERR_OUT_OF_MEMORY", "53200"},
};

TEST(Error, NamesAndSqlstatesAreStable) {
  for (const auto& e : kContract) {
    EXPECT_STREQ(error_name(e.code), e.name);
    EXPECT_STREQ(error_sqlstate(e.code), e.sqlstate);
  }
}

TEST(Error, SqlstatesAreDistinct) {
  std::set<std::string> seen;
  for (const auto& e : kContract) EXPECT_TRUE(seen.insert(e.sqlstate).second) << e.sqlstate;
}

TEST(Error, EveryNameLooksUpItsCode) {
  for (const auto& e : kContract) {
    const auto found = error_code_named(e.name);
    ASSERT_TRUE(found.has_value()) << e.name;
    EXPECT_EQ(*found, e.code) << e.name;
  }
  EXPECT_FALSE(error_code_named("ERR_NO_SUCH_ERROR").has_value());
  EXPECT_FALSE(error_code_named("err_lease_lost").has_value());  // names are exact
  EXPECT_FALSE(error_code_named("").has_value());
}

TEST(Error, WhatPrefixesTheName) {
  const Error e(ErrorCode::LeaseLost, "attempt 1 was taken over", "do not record a result");
  EXPECT_STREQ(e.what(), "ERR_LEASE_LOST: attempt 1 was taken over");
  EXPECT_EQ(e.code(), ErrorCode::LeaseLost);
  EXPECT_EQ(e.hint(), "do not record a result");
}

}  // namespace
}  // namespace idem
