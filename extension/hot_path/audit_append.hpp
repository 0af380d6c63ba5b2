// The audit trail's one INSERT (idem.mutations), for the hot path and for idem._audit.
#pragma once

#include "core/statements/hot_statements.hpp"
#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {

// One audit row by column name (audit_columns.def); a column not set is NULL.
struct AuditRow {
#define AUDIT_COLUMN(name, type) Value name;
#include "core/statements/audit_columns.def"
#undef AUDIT_COLUMN
};

constexpr int kAuditColumns = statements::kAuditColumns;
static_assert(kAuditColumns <= kMaxPlanArgs, "the audit INSERT takes more parameters than a kept plan holds");

// Inside an open SPI connection. Into idem.mutations, or on Citus into the tenant's shard of it
// (shards: a route's tables).
void append_audit(const AuditRow& row, const statements::Tables* shards = nullptr);

}  // namespace idem::hot
