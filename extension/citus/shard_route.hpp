// Citus mode's fast path: where a tenant's rows are on this node. The C fast paths read and write
// the tenant's shards as the plain tables they are here, as Citus's own executor does once it has
// routed a statement, and take the lock that executor takes first, so that a shard move (which
// takes it exclusively before it switches the placement) waits for the transaction, and a
// transaction that waited sees where the shard went.
#pragma once

#include "core/statements/hot_statements.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::citus {

struct ShardRoute {
  statements::Tables tables;  // the shards of idem.keys, idem.retired_keys, idem.mutations
  Oid keys = InvalidOid;       // idem.keys' shard and its primary key, for the record read
  Oid keys_pkey = InvalidOid;
};

// PostgreSQL only (call it guarded; not through pg::call: it holds strings): the tenant's route,
// with Citus's shard metadata lock held in ShareLock to the end of the transaction;
// ERR_TENANT_NOT_LOCAL when the tenant's shard is not placed on this node. Cached per tenant
// until a placement or shard of idem.keys changes (forget_routes).
ShardRoute local_route(Datum tenant_text);

// Every route is stale: Citus invalidated idem.keys' relcache entry (its metadata changed).
void forget_routes();

}  // namespace idem::citus
