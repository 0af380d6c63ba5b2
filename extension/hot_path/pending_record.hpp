// A new key's record kept in backend memory until something needs it (docs/hot-path.md "The
// pending record"). The acquire of a new key takes the key's lock and writes nothing; the
// record is written once: resolved by its complete, or in_progress before anything else in this
// backend reads idem.keys (an executor start that names it, any acquire) and at PRE_COMMIT or
// PRE_PREPARE. Other sessions meet the key's lock, as they met the uncommitted row before.
// A savepoint rolled back takes a pending record made inside it with it, and gives back one it
// had written: the record always lives at the (sub)transaction level of its key's lock.
#pragma once

#include "extension/hot_path/record_params.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::hot::pending {

// Whether a new key's acquire may keep its record pending now (idem.pending_record, a slot free).
bool may_keep();

// Keeps the record (its values copied into the transaction's memory), written as its owner: the
// role acquire runs as.
void keep(const RecordParams& params, bool members_null, int64 attempt, int32 generation);

// The record an unwritten pending entry holds for (tenant, digest), if attempt and the lease's
// secret hash are its own: its fields, for complete's one INSERT.
struct Held {
  RecordParams params;  // its values outlive the entry: they are in the transaction's memory
  int64 attempt;
  int32 generation;
  int index;
};
bool find(std::string_view tenant, std::string_view digest, int64 attempt, std::string_view secret_hash, Held* out);

// complete's write: the held record, resolved with the response (the values of complete's
// UPDATE, in the order of statements::pending_record_insert's last seven parameters).
void write_resolved(const Held& held, const Args& response);

// Writes every pending record in_progress (nothing when none is pending).
bool any();
void write_all();

// Installed by _PG_init.
void install();

}  // namespace idem::hot::pending
