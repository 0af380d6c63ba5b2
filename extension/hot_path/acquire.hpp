// The acquisition of a key, in C (acquire.cpp): the arguments of idem._acquire_general, from the
// idem.acquire overloads (acquire_overloads.cpp).
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::hot {

// tenant, scope digest, key, payload hash, caller, resource, lease, ttl, on_busy, mutation_type
constexpr int kAcquireArgs = 10;

struct AcquireCall {
  Datum value[kAcquireArgs];
  bool null[kAcquireArgs];
};

// An idem.acquire_result (fcinfo is the SQL call's, for its result type).
Datum acquire(const AcquireCall& call, FunctionCallInfo fcinfo);

}  // namespace idem::hot
