#include "extension/key_lock.hpp"

#include "extension/pg/pg_error.hpp"

namespace idem::key_lock {
namespace {

LOCKTAG tag_of(int64 key) {
  LOCKTAG tag;
  SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, static_cast<uint32>(static_cast<uint64>(key) >> 32),
                       static_cast<uint32>(key), 3);
  return tag;
}

}  // namespace

int64 of_digest(const hash::Digest& digest) {
  uint64 key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | digest[i];
  return static_cast<int64>(key);
}

bool try_take(int64 key) {
  const LOCKTAG tag = tag_of(key);
  return pg::call(LockAcquire, &tag, LOCKMODE(ExclusiveLock), false, true) != LOCKACQUIRE_NOT_AVAIL;
}

void take(int64 key) {
  const LOCKTAG tag = tag_of(key);
  (void)pg::call(LockAcquire, &tag, LOCKMODE(ExclusiveLock), false, false);
}

bool give_back(int64 key) {
  const LOCKTAG tag = tag_of(key);
  return pg::call(LockRelease, &tag, LOCKMODE(ExclusiveLock), false);
}

bool held_by_me(int64 key) {
  const LOCKTAG tag = tag_of(key);
  return pg::call(LockHeldByMe, &tag, LOCKMODE(ExclusiveLock));
}

}  // namespace idem::key_lock
