// On Citus, a query that calls an entry point idem.citus_distribute registers to run on the
// tenant's node (acquire, complete, checkpoint, release, emit, and the consumer's claim_tenant, ack,
// nack and consume_once: the forms with a parameter named tenant) is checked before
// Citus plans it (docs/citus.md), by a planner hook that runs in front of Citus's when this library
// is loaded after it (shared_preload_libraries = 'citus,pg_idempotency' on every node;
// idem.citus_distribute refuses a cluster without it):
// - a tenant that is NULL once the planner has folded it (a literal, a cast, lower(NULL), a bound
//   parameter, a PL/pgSQL variable, an inlined SQL function) is refused with ERR_ARGUMENT_INVALID:
//   Citus 13.2 hashes the NULL while delegating the call, and the node crashes;
// - a call inside a larger query (a subquery, a CTE, an expression around it) is refused with
//   ERR_TENANT_NOT_LOCAL: Citus delegates only SELECT f(...) and SELECT ... FROM f(...), runs the
//   rest here, where the tenant's key lock is not, and crashes on some of those forms (also for
//   the consumer's calls, which it delegates only outside a transaction block);
// - under SET ROLE, the session's login role's binding (to the tenant, or for a consumer's call to
//   the consumer) is checked here, before the call goes to the
//   tenant's node, where Citus logs in as the SET ROLE target and the binding would not be seen;
//   such a plan is made again when the role changes (dependsOnRole); a consumer's call whose
//   consumer is not a constant there is refused (ERR_CONSUMER_FORBIDDEN).
// Nothing is checked on a database that is not on Citus.
#pragma once

namespace idem::citus {

// At library load: put the guard in front of the planner (and whatever planner hook came before).
void install_tenant_call_guard();

}  // namespace idem::citus
