// The text of the hot path's generated statements, from the column lists beside this file
// (audit_columns.def, record_params.def, record_columns.def), so that a statement, its
// parameter types and the struct that fills it come from one list. Pure C++.
#pragma once

#include <string>
#include <string_view>

namespace idem::statements {

constexpr int kAuditColumns = 0
#define AUDIT_COLUMN(name, type) +1
#include "core/statements/audit_columns.def"
#undef AUDIT_COLUMN
    ;

constexpr int kRecordParams = 0
#define RECORD_PARAM(name, type) +1
#include "core/statements/record_params.def"
#undef RECORD_PARAM
    ;

// The tables a statement names: idem's own on one node; on Citus, the shards that hold one
// tenant's rows on this node (the fast path writes them as plain tables, docs/citus.md).
struct Tables {
  std::string keys = "idem.keys";
  std::string retired_keys = "idem.retired_keys";
  std::string mutations = "idem.mutations";
  // Shards lack the identity of idem.mutations.mutation_id (Citus draws it on the table's
  // node-local sequence before it routes a row): the INSERT draws it there itself.
  bool shards = false;
};

// The audit row's column names, in audit_columns.def's order (kAuditColumns of them).
const char* const* audit_column_names();

// INSERT INTO <mutations> (<the columns>) VALUES ($1, ..., $n); into shards, with mutation_id first.
std::string audit_insert(const Tables& tables = {});

// The schema the record INSERT writes: this library's, or one an ALTER EXTENSION UPDATE has not
// brought up to it yet (the library is installed first).
enum class RecordSchema {
  kBeforeKeyScope,        // no idem.keys.key_scope, no payload_members: all params but the last two
  kBeforePayloadMembers,  // 0.3.6: no idem.keys.payload_members: all params but the last
  kCurrent,               // all kRecordParams
};

// The INSERT of a new key's record, RETURNING attempt, generation, lease_expires_at. With
// key_scope, it inserts nothing while another record owns the key under the key scope tenant.
std::string record_insert(RecordSchema schema, const Tables& tables = {});

// A pending record's INSERT (extension/hot_path/pending_record.cpp): the record a new key's
// acquire kept in backend memory, with the attempt and generation it drew then, written
// in_progress (when something else needs it, or at pre-commit) or resolved by its complete, the
// transaction's one write of the record. Its key scope is the acquire's, not the session's now.
// The record params, then these, then (resolved only) kResolvedRecordParams more.
constexpr int kPendingRecordParams = kRecordParams + 2;  // attempt, generation
constexpr int kResolvedRecordParams = kPendingRecordParams + 7;
enum class PendingWrite { kInProgress, kResolved };
std::string pending_record_insert(PendingWrite write);

// What the acquire of a new key checks under its key's lock before it keeps a pending record
// (the record params' numbering): the attempt (the fencing token), the generation, the lease's end
// (as record_insert returns them), then whether a record committed since its first read owns the key.
std::string pending_record_check();

// "a, b, c" of n names.
std::string joined(const char* const* names, int n);

// "$1, $2, ..., $n".
std::string parameter_list(int n);

// `text` with each {name} replaced by $k, k the 1-based position of name in `params`, and each
// {@table} (keys, retired_keys, mutations) by that table's name in `tables`; an unknown or
// unclosed name is a bug in a .def file: std::logic_error.
std::string with_params(std::string_view text, const char* const* params, int n, const Tables& tables = {});

}  // namespace idem::statements
