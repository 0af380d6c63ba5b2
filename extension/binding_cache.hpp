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

// Whether a bound role's check must run: some binding exists, or the database runs on Citus,
// where this node's copy of the table is an empty shell (the bindings are a reference table that
// only SQL reads). Calls PostgreSQL through its own guards.
bool may_be_bound(Table table);

// On a relcache invalidation of relid (InvalidOid: all): forget the cached answers when it is a
// bindings table.
void forget_relation(Oid relid);

}  // namespace idem::bindings
