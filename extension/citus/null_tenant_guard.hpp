// On Citus, a query that calls a distributed function of ours with a NULL tenant constant (or a
// bound NULL parameter) crashes the server: Citus 13.2 hashes the NULL when it delegates the call
// to the tenant's node, and every session of the node is lost. The entry points cannot be STRICT
// (their optional arguments take NULL for "the default"), so a planner hook refuses such a query
// first, with ERR_ARGUMENT_INVALID. It runs before Citus's only when this library is loaded after
// Citus: shared_preload_libraries = 'citus,pg_idempotency' on every node (idem.citus_distribute
// refuses a cluster without it; docs/citus.md).
#pragma once

namespace idem::citus {

// At library load: put the guard in front of the planner (and whatever planner hook came before).
void install_null_tenant_guard();

}  // namespace idem::citus
