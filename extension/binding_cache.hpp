// Whether any tenant or consumer binding exists, cached per backend (docs/security.md): with none,
// nobody is bound, and a check costs no SQL. The answer is forgotten whenever the table changes
// (a statement trigger sends a relcache invalidation, which every backend processes by its next
// transaction: "a binding takes effect at the next transaction").
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::bindings {

enum class Table { Tenant, Consumer };  // idem.tenant_bindings, idem.consumer_bindings

// PostgreSQL only (call it guarded): whether the table holds any row, probed under the latest
// snapshot on first use after an invalidation, then cached.
bool any(Table table);

// At library load: forget the cached answers when a bindings table changes.
void register_invalidation();

}  // namespace idem::bindings
