// Hooks of the key store that PostgreSQL calls outside any SQL function.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem {

// ERR_NON_ATOMIC_IDEMPOTENCY_STORE unless a commit now would be durable; notes that this
// transaction writes records, so the check runs again at its commit. (idem._require_durable_store)
void require_durable_store_now();

// Transaction callback: refuses to commit a transaction that wrote idempotency records while
// fsync or synchronous_commit is off at commit time (ERR_NON_ATOMIC_IDEMPOTENCY_STORE).
void check_durability_at_commit(XactEvent event, void* arg);

// Ends idem.purge_audit's permission to delete audit rows (at the end of every transaction).
void reset_audit_purge();

// Subtransaction callback: an aborted subtransaction ends that permission too.
void reset_audit_purge_on_abort(SubXactEvent event, SubTransactionId, SubTransactionId, void*);

}  // namespace idem
