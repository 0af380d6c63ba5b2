// The argument values of one execution of a prepared statement, bounded: a value past the
// capacity is refused (ERR_INTERNAL), never written past the arrays. Plain data, so it may be
// handed to a guarded PostgreSQL call (extension/hot_path/kept_plan.hpp instantiates it).
#pragma once

#include <string>

#include "core/error.hpp"

namespace idem::statements {

// nulls[i] is 'n' for SQL NULL, ' ' otherwise (SPI's convention).
template <typename Datum, int Capacity>
struct PlanArgs {
  Datum values[Capacity];
  char nulls[Capacity];
  int n = 0;

  PlanArgs& add(Datum value, bool is_null) {
    if (n == Capacity) {
      throw Error(ErrorCode::Internal,
                  "a prepared statement takes at most " + std::to_string(Capacity) + " arguments: one more was added");
    }
    values[n] = is_null ? Datum(0) : value;
    nulls[n++] = is_null ? 'n' : ' ';
    return *this;
  }
};

}  // namespace idem::statements
