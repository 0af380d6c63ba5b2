// Statements of the hot path, prepared once per backend and kept (as ri_triggers.c keeps its
// plans): no SQL is parsed again per call, and the plan cache revalidates a kept plan after DDL
// on what it reads. Every call runs inside pg::guarded (an elog becomes a pg::PgError).
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::hot {

constexpr int kMaxPlanArgs = 20;

struct KeptPlan {
  const char* sql;
  int nargs;
  Oid types[kMaxPlanArgs];
  SPIPlanPtr plan;  // nullptr until first use
};

// Values for one execution: nulls[i] is 'n' for SQL NULL, ' ' otherwise (SPI's convention).
struct Args {
  Datum values[kMaxPlanArgs];
  char nulls[kMaxPlanArgs];
  int n = 0;
  Args& add(Datum value) {
    values[n] = value;
    nulls[n++] = ' ';
    return *this;
  }
  Args& add_null() {
    values[n] = 0;
    nulls[n++] = 'n';
    return *this;
  }
};

// Argument n of the calling SQL function, NULL as NULL.
inline void add_arg(FunctionCallInfo fcinfo, int n, Args& args) {
  if (PG_ARGISNULL(n)) args.add_null();
  else args.add(PG_GETARG_DATUM(n));
}

// Column `column` (1-based) of a result row, NULL as NULL.
inline void add_column(HeapTuple row, TupleDesc desc, int column, Args& args) {
  bool is_null = false;
  const Datum v = SPI_getbinval(row, desc, column, &is_null);
  if (is_null) args.add_null();
  else args.add(v);
}

// Runs `plan` (preparing and keeping it on first use) inside an open SPI connection; returns
// SPI's result code. Not read-only, as PL/pgSQL runs a VOLATILE function's statements: each one
// takes a new snapshot, so under READ COMMITTED it sees what the last writer committed.
int execute(KeptPlan& plan, const Args& args, long max_rows);

// Column `column` (1-based) of the first result row; *is_null says SQL NULL.
Datum column(int column, bool* is_null);

}  // namespace idem::hot
