// A key's lock: a transaction-level advisory lock in a tag space of its own (field4 = 3; the SQL
// functions pg_advisory_lock(bigint) and (int, int) use 1 and 2), so no role that can only call
// SQL's advisory-lock functions can take, pin or release it. Locks are re-entrant: each take is
// one hold, and a release gives back one hold.
#pragma once

#include "core/hash/sha256.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::key_lock {

// The first 8 bytes of the SHA-256 scope digest. Two keys sharing a lock key only make one of them
// report in_progress needlessly (p = 2^-64 a pair); they never make a key execute twice.
int64 of_digest(const hash::Digest& digest);

bool try_take(int64 key);   // never waits
void take(int64 key);       // waits (lock_timeout, deadlock detection and cancel apply)
bool give_back(int64 key);  // one hold of the current resource owner
bool held_by_me(int64 key);

}  // namespace idem::key_lock
