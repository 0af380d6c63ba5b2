// Citus mode (docs/citus.md): once idem.citus_distribute() has made idem.keys a Citus table, the
// tables of this node are empty shells and a tenant's rows live in its shard, on one node. The C
// fast paths then read and write the tenant's shards (shard_route.hpp); what they cannot do goes
// through SQL, which Citus routes to the shard. A call must run on the node that holds its
// tenant's shard (its key lock is that node's), which force-delegated entry points do.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::citus {

// PostgreSQL only (call it guarded): whether idem.keys is a Citus table in this database. Probed
// on first use and cached; forgotten whenever idem.keys' relcache entry is invalidated, which
// Citus does for every change of its metadata about the table (distribution, shard placement).
bool distributed();

// PostgreSQL only (call it guarded): raises ERR_TENANT_NOT_LOCAL unless the shard that holds
// tenant's rows is on this node (idem._citus_require_local).
void require_local(Datum tenant_text);

// Plain C (call it through pg::call): the local shard of idem.<table> holding tenant, and that
// shard's copy of the index named `index`; ERR_TENANT_NOT_LOCAL when the shard is elsewhere.
void local_shard_unsafe(const char* table, const char* index, text* tenant, Oid* shard, Oid* shard_index);

// On a relcache invalidation of relid (InvalidOid: all): forget the answer when it is idem.keys.
void forget_relation(Oid relid);

}  // namespace idem::citus
