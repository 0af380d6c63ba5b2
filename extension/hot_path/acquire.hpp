// The acquisition of a key, in C (acquire.cpp): the arguments of idem._acquire_general, from the
// idem.acquire overloads (acquire_overloads.cpp).
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::hot {

// The positions of idem._acquire_general's arguments in an AcquireCall.
namespace call_arg {
enum : int { kTenant, kDigest, kKey, kHash, kCaller, kResource, kLease, kTtl, kOnBusy, kMutationType, kMembers };
}
constexpr int kAcquireArgs = 11;

struct AcquireCall {
  Datum value[kAcquireArgs];
  bool null[kAcquireArgs];
  // A jsonb or text payload (the other forms): kMembers is computed from it only when a new
  // record or a mismatch needs it (acquire.cpp's need_members), never for a replay.
  Datum payload = 0;
  bool payload_is_jsonb = false;
  bool members_pending = false;
  void set(int position, Datum v, bool is_null) {
    value[position] = is_null ? 0 : v;
    null[position] = is_null;
  }
};

// An idem.acquire_result (fcinfo is the SQL call's, for its result type). Computes call's
// member digests when they are pending and needed.
Datum acquire(AcquireCall& call, FunctionCallInfo fcinfo);

}  // namespace idem::hot
