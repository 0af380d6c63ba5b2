// The hot path's statements generated from their column lists (core/statements/*.def) are, to
// the byte, the statements they replaced, and a broken list fails loudly.
#include "core/statements/hot_statements.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "core/statements/plan_args.hpp"

#include <stdexcept>

namespace idem::statements {
namespace {

const char* const kNames[] = {"a"};

TEST(HotStatements, AuditInsertIsTheEighteenColumnInsert) {
  EXPECT_EQ(kAuditColumns, 18);
  EXPECT_EQ(audit_insert(),
            "INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, generation, attempt,"
            " mutation_type, outcome, handler_called, order_id, handler_response, local_status, error_message,"
            " recovery_point, retry_count, attempted_at, completed_at)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)");
}

TEST(HotStatements, RecordInsertIsTheThirteenParameterInsert) {
  EXPECT_EQ(kRecordParams, 13);
  EXPECT_EQ(record_insert(RecordSchema::kCurrent),
            "INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,"
            " caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type,"
            " attempted_at, attempts_in_generation, lease_secret_hash, payload_members)"
            " SELECT $1, $2, 'in_progress', nextval('idem.fencing_token_seq'),"
            " 1 + coalesce((SELECT g.generation FROM idem.retired_keys g WHERE g.tenant_id = $1 COLLATE \"C\" AND g.scope_digest = $2), 0),"
            " $3, idem.fingerprint_scheme(), $4, $5, $6, $7, $8, $9 + $7, $9, $9 + $7 + $8, $10, $9, 1, $11, $13"
            " WHERE NOT ($12 AND EXISTS (SELECT 1 FROM idem.keys o WHERE o.tenant_id = $1 COLLATE \"C\""
            " AND o.client_key = $6 COLLATE \"C\" AND o.key_scope = 'tenant'))"
            " ON CONFLICT DO NOTHING RETURNING k.attempt, k.generation, k.lease_expires_at");
}

TEST(HotStatements, RecordInsertBeforePayloadMembersIsTheTwelveParameterInsert) {
  EXPECT_EQ(record_insert(RecordSchema::kBeforePayloadMembers),
            "INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,"
            " caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type,"
            " attempted_at, attempts_in_generation, lease_secret_hash)"
            " SELECT $1, $2, 'in_progress', nextval('idem.fencing_token_seq'),"
            " 1 + coalesce((SELECT g.generation FROM idem.retired_keys g WHERE g.tenant_id = $1 COLLATE \"C\" AND g.scope_digest = $2), 0),"
            " $3, idem.fingerprint_scheme(), $4, $5, $6, $7, $8, $9 + $7, $9, $9 + $7 + $8, $10, $9, 1, $11"
            " WHERE NOT ($12 AND EXISTS (SELECT 1 FROM idem.keys o WHERE o.tenant_id = $1 COLLATE \"C\""
            " AND o.client_key = $6 COLLATE \"C\" AND o.key_scope = 'tenant'))"
            " ON CONFLICT DO NOTHING RETURNING k.attempt, k.generation, k.lease_expires_at");
}

TEST(HotStatements, RecordInsertBeforeKeyScopeIsTheElevenParameterInsert) {
  EXPECT_EQ(record_insert(RecordSchema::kBeforeKeyScope),
            "INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,"
            " caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type,"
            " attempted_at, attempts_in_generation, lease_secret_hash)"
            " VALUES ($1, $2, 'in_progress', nextval('idem.fencing_token_seq'),"
            " 1 + coalesce((SELECT g.generation FROM idem.retired_keys g WHERE g.tenant_id = $1 COLLATE \"C\" AND g.scope_digest = $2), 0),"
            " $3, idem.fingerprint_scheme(), $4, $5, $6, $7, $8, $9 + $7, $9, $9 + $7 + $8, $10, $9, 1, $11)"
            " ON CONFLICT DO NOTHING RETURNING k.attempt, k.generation, k.lease_expires_at");
}

TEST(HotStatements, OnCitusTheStatementsNameTheTenantsShards) {
  Tables shards;
  shards.keys = "idem.keys_102008";
  shards.retired_keys = "idem.retired_keys_102072";
  shards.mutations = "idem.mutations_102040";
  shards.shards = true;
  const std::string audit = audit_insert(shards);
  EXPECT_EQ(audit.rfind("INSERT INTO idem.mutations_102040 (mutation_id, tenant_id, ", 0), 0u);
  EXPECT_NE(audit.find(" VALUES (nextval('idem.mutations_mutation_id_seq'), $1, $2, "), std::string::npos);
  const std::string insert = record_insert(RecordSchema::kCurrent, shards);
  EXPECT_EQ(insert.rfind("INSERT INTO idem.keys_102008 AS k (", 0), 0u);
  EXPECT_NE(insert.find("FROM idem.retired_keys_102072 g WHERE"), std::string::npos);
  EXPECT_NE(insert.find("FROM idem.keys_102008 o WHERE"), std::string::npos);
  EXPECT_EQ(insert.find("idem.keys "), std::string::npos);
  EXPECT_EQ(insert.find("idem.retired_keys "), std::string::npos);
  EXPECT_EQ(with_params("UPDATE {@keys} SET x = {a}", kNames, 1, shards), "UPDATE idem.keys_102008 SET x = $1");
  EXPECT_THROW(with_params("{@orders}", kNames, 1, shards), std::logic_error);
}

TEST(HotStatements, PiecesJoinAndNumber) {
  const char* const names[] = {"a", "b", "c"};
  EXPECT_EQ(joined(names, 3), "a, b, c");
  EXPECT_EQ(joined(names, 0), "");
  EXPECT_EQ(parameter_list(3), "$1, $2, $3");
  EXPECT_EQ(parameter_list(0), "");
  EXPECT_EQ(with_params("{c} + {a} = 'x'", names, 3), "$3 + $1 = 'x'");
}

TEST(HotStatements, AParameterNotInTheListIsABug) {
  const char* const names[] = {"a", "b"};
  EXPECT_THROW(with_params("{a} + {z}", names, 2), std::logic_error);
  EXPECT_THROW(with_params("{b}", names, 1), std::logic_error);  // beyond the count given
  EXPECT_THROW(with_params("{a", names, 2), std::logic_error);
}

TEST(PlanArgs, KeepsEachValueAndNullInOrder) {
  PlanArgs<std::uintptr_t, 3> args;
  args.add(7, false).add(9, true).add(11, false);
  EXPECT_EQ(args.n, 3);
  EXPECT_EQ(args.values[0], 7u);
  EXPECT_EQ(args.values[1], 0u);  // a NULL's value is never read, and is zero
  EXPECT_EQ(args.values[2], 11u);
  EXPECT_EQ(std::string(args.nulls, 3), " n ");
}

TEST(PlanArgs, OneMoreThanTheCapacityIsRefusedAndWritesNothing) {
  PlanArgs<std::uintptr_t, 2> args;
  args.add(1, false).add(2, false);
  try {
    args.add(3, false);
    FAIL() << "a third argument was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal);
    EXPECT_STREQ(e.what(), "ERR_INTERNAL: a prepared statement takes at most 2 arguments: one more was added");
  }
  EXPECT_EQ(args.n, 2);
  EXPECT_EQ(args.values[1], 2u);
}


TEST(HotStatements, APendingRecordIsWrittenWithWhatItsAcquireDrew) {
  EXPECT_EQ(kPendingRecordParams, 15);
  EXPECT_EQ(pending_record_insert(PendingWrite::kInProgress),
            "INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,"
            " caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type,"
            " attempted_at, attempts_in_generation, lease_secret_hash, payload_members, key_scope)"
            " VALUES ($1, $2, 'in_progress', $14, $15, $3, idem.fingerprint_scheme(), $4, $5, $6, $7, $8, $9 + $7, $9,"
            " $9 + $7 + $8, $10, $9, 1, $11, $13, CASE WHEN $12 THEN 'tenant' ELSE 'route' END)");
}

TEST(HotStatements, APendingRecordResolvedByItsCompleteIsOneInsert) {
  EXPECT_EQ(kResolvedRecordParams, 22);
  EXPECT_EQ(pending_record_insert(PendingWrite::kResolved),
            "INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,"
            " caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type,"
            " attempted_at, attempts_in_generation, lease_secret_hash, payload_members, response_status, response_headers,"
            " response_body, order_id, handler_response, local_status, resolved_at, key_scope)"
            " VALUES ($1, $2, 'resolved', $14, $15, $3, idem.fingerprint_scheme(), $4, $5, $6, $7, $8, NULL, $9,"
            " $22 + $8, $10, $9, 1, $11, $13, $16, coalesce($17, jsonb_build_object()), coalesce($18, ''::bytea), $19, $20,"
            " $21, $22, CASE WHEN $12 THEN 'tenant' ELSE 'route' END)");
}

TEST(HotStatements, APendingRecordIsCheckedUnderItsLockBeforeItIsKept) {
  EXPECT_EQ(pending_record_check(),
            "SELECT nextval('idem.fencing_token_seq'),"
            " 1 + coalesce((SELECT g.generation FROM idem.retired_keys g WHERE g.tenant_id = $1 COLLATE \"C\" AND g.scope_digest = $2), 0),"
            " $9 + $7,"
            " EXISTS (SELECT 1 FROM idem.keys k WHERE k.tenant_id = $1 COLLATE \"C\" AND k.scope_digest = $2)"
            " OR ($12 AND EXISTS (SELECT 1 FROM idem.keys o WHERE o.tenant_id = $1 COLLATE \"C\""
            " AND o.client_key = $6 COLLATE \"C\" AND o.key_scope = 'tenant'))");
}

}  // namespace
}  // namespace idem::statements
