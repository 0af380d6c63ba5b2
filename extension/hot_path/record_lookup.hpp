// The key's record, read straight from idem.keys through its primary key (docs/hot-path.md): a
// replay is one index probe, with no plan and no executor. It sees what acquire's SPI read saw
// before: the snapshot a VOLATILE function's next statement takes (the latest committed state
// under READ COMMITTED, the transaction's own under REPEATABLE READ), after the command counter
// moved on; the function runs as the extension's owner, a superuser, so row security did not
// hide a row from that read either.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::hot {

// The fields read, by position in Record (named apart from acquire's argument positions).
namespace field {
enum RecordField {
  kStatus, kGeneration, kPayloadHash, kMutationType, kRecoveryPoint, kResponseStatus, kResponseHeaders,
  kResponseBody, kOrderId, kLeaseExpiresAt, kExpiresAt, kAttemptsInGeneration,
  kPayloadPinned,  // read as NULL on a schema without the column
  kKeyScope,       // read as NULL on a schema without the column
  kPayloadMembers,  // read as NULL on a schema without the column (before 0.4.0)
  kCount
};
}  // namespace field

// The record's fields as the fast path reads them, copied out of the buffer into the memory
// context current at the call (a toasted value stays a toast pointer, as in an SPI result).
struct Record {
  bool found;
  Datum value[field::kCount];
  bool null[field::kCount];
  TransactionId xmin;  // the row version's, as SQL's xmin shows it
  bool has_key_scope;  // the schema has idem.keys.key_scope, found or not
  bool has_payload_members;  // the schema has idem.keys.payload_members (0.4.0), found or not
};

// Plain C, nothing with a destructor: called through pg::call. From idem.keys, or with a shard
// (InvalidOid: none) from that table and its primary key index (Citus mode, a tenant's shard).
void read_record_unsafe(Oid shard, Oid shard_index, Datum tenant_text, Datum digest_bytea, Record* out);

// Plain C: whether idem.keys has payload_members (0.4.0's schema): the general path then takes
// the member digests too. Learns idem.keys's layout if it is not known.
bool keys_have_payload_members_unsafe();

// On a relcache invalidation of relid (InvalidOid: all): forget the cached relation and column
// numbers when it is idem.keys or the table last read.
void forget_record_layout(Oid relid);

}  // namespace idem::hot
