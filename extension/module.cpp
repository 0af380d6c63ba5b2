// The shared library's entry points: the module magic and _PG_init.
#include "core/interrupts.hpp"
#include "extension/binding_cache.hpp"
#include "extension/citus/citus_mode.hpp"
#include "extension/citus/tenant_call_guard.hpp"
#include "extension/gucs.hpp"
#include "extension/hot_path/pending_record.hpp"
#include "extension/hot_path/record_lookup.hpp"
#include "extension/machine_cache.hpp"
#include "extension/outbox_functions.hpp"
#include "extension/pg/pg_error.hpp"
#include "extension/store_functions.hpp"
#include "extension/pg/postgres.hpp"

extern "C" {
PG_MODULE_MAGIC;

void _PG_init(void);
}

namespace {

// core/'s loops poll this: a pending cancel or statement_timeout becomes a PgError that unwinds
// the C++ frames and is re-raised by the boundary (CHECK_FOR_INTERRUPTS would longjmp over them).
void poll_backend_interrupts() {
  if (!INTERRUPTS_PENDING_CONDITION()) return;
  idem::pg::call(ProcessInterrupts);
}

// A relation's cached facts are stale (InvalidOid: every relation's).
void forget_cached_relation(Datum, Oid relid) {
  idem::machines::forget_relation(relid);
  idem::bindings::forget_relation(relid);
  idem::hot::forget_record_layout(relid);
  idem::citus::forget_relation(relid);
}

}  // namespace

// Runs once per backend when the library is first loaded (by CREATE EXTENSION or any call).
// Nothing here needs shared memory, so shared_preload_libraries is not required.
void _PG_init(void) {
  idem::gucs::define();
  RegisterXactCallback(idem::check_durability_at_commit, nullptr);
  RegisterXactCallback(idem::sequence_outbox_at_commit, nullptr);
  RegisterSubXactCallback(idem::reset_audit_purge_on_abort, nullptr);
  idem::hot::pending::install();
  idem::set_interrupt_poll(poll_backend_interrupts);
  // One relcache callback for every cache of ours: PostgreSQL has ten slots for the whole
  // backend, and Citus alone takes several.
  CacheRegisterRelcacheCallback(forget_cached_relation, 0);
  idem::citus::install_tenant_call_guard();
}
