// The extension's settings (idem.*), defined once when the library loads.
#pragma once

namespace idem::gucs {

extern int default_ttl_seconds;      // idem.default_ttl: how long a resolved record is replayed
extern int lease_timeout_seconds;    // idem.lease_timeout: how long a holder may run unseen
extern int retry_after_seconds;      // idem.retry_after: the Retry-After sent with in_progress
extern int key_min_length;           // idem.key_min_length
extern int key_max_length;           // idem.key_max_length
extern bool allow_non_atomic_store;  // idem.allow_non_atomic_store: tests only, never production
extern int wait_timeout_ms;          // idem.wait_timeout: the longest on_busy => 'wait' polls
extern int max_lease_seconds;        // idem.max_lease: no lease may block a key longer
extern int max_ttl_seconds;          // idem.max_ttl: no record may be replayed longer
extern int max_payload_bytes;        // idem.max_payload_bytes: the largest payload fingerprinted
extern int min_audit_retention_seconds;  // idem.min_audit_retention: purge_audit keeps at least this much
extern bool audit_replays;           // idem.audit_replays: append an audit row for every replay
extern bool payload_members;         // idem.payload_members: keep member digests to name what a mismatch changed
extern int history_retention_seconds;  // idem.history_retention: how long a purged key's generation is remembered

extern bool fast_path;                 // idem.fast_path: off sends every acquire/complete to the PL/pgSQL path
extern bool pending_record;            // idem.pending_record: a new key's record written once, by its complete
extern int key_scope;                 // idem.key_scope: tenant (a key is the tenant's) | route

extern bool outbox_notify;            // idem.outbox_notify: NOTIFY idem_outbox at an emitting commit

void define();

}  // namespace idem::gucs
