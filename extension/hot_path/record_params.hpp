// The parameters of a new key's record (core/statements/record_params.def), as the acquire of a
// new key fills them and the record's INSERTs take them.
#pragma once

#include <initializer_list>

#include "core/statements/hot_statements.hpp"
#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {

struct RecordParams {
#define RECORD_PARAM(name, type) Datum name;
#include "core/statements/record_params.def"
#undef RECORD_PARAM
};
constexpr int kRecordParams = statements::kRecordParams;
static_assert(statements::kResolvedRecordParams <= kMaxPlanArgs, "a record INSERT takes more parameters than a kept plan holds");

// Their types, in order.
constexpr Oid kRecordParamTypes[] = {
#define RECORD_PARAM(name, type) type,
#include "core/statements/record_params.def"
#undef RECORD_PARAM
};

// A kept plan of a statement that takes the first n record params, then `more` (its own).
inline KeptPlan record_plan(const char* sql, int n, std::initializer_list<Oid> more = {}) {
  KeptPlan plan{sql, n + static_cast<int>(more.size()), {}, nullptr};
  int i = 0;
  for (const Oid type : kRecordParamTypes) plan.types[i++] = type;
  i = n;
  for (const Oid type : more) plan.types[i++] = type;
  return plan;
}

// The first n of them; payload_members NULL when members_null (the call kept no member digests:
// opted out, or a client before 0.4.0).
inline Args args_of(const RecordParams& p, int n, bool members_null) {
  Args args;
#define RECORD_PARAM(name, type) \
  if (args.n < n) args.add(&p.name == &p.payload_members && members_null ? Value{} : Value::of(p.name));
#include "core/statements/record_params.def"
#undef RECORD_PARAM
  return args;
}

}  // namespace idem::hot
