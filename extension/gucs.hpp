// The extension's settings (idem.*), defined once when the library loads.
#pragma once

namespace idem::gucs {

extern int default_ttl_seconds;      // idem.default_ttl: how long a resolved record is replayed
extern int lease_timeout_seconds;    // idem.lease_timeout: how long a holder may run unseen
extern int retry_after_seconds;      // idem.retry_after: the Retry-After sent with in_progress
extern int key_min_length;           // idem.key_min_length
extern int key_max_length;           // idem.key_max_length
extern bool allow_non_atomic_store;  // idem.allow_non_atomic_store: tests only, never production

void define();

}  // namespace idem::gucs
