// The audit trail's one INSERT (idem.mutations), for the hot path and for idem._audit.
#pragma once

#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {

// One audit row, in idem._audit's argument order: tenant, scope digest, key, caller, resource,
// generation, attempt, mutation type, outcome, handler_called, order id, handler response, local
// status, error, recovery point, retry count, attempted at, completed at.
constexpr int kAuditColumns = 18;

// Inside an open SPI connection and pg::guarded.
void append_audit(const Args& row);

}  // namespace idem::hot
