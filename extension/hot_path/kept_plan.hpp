// Statements of the hot path, prepared once per backend and kept (as ri_triggers.c keeps its
// plans): no SQL is parsed again per call, and the plan cache revalidates a kept plan after DDL
// on what it reads. Each PostgreSQL call here is one guard (an elog becomes a pg::PgError); the
// arguments are gathered in C++ between them.
#pragma once

#include <string>
#include <unordered_map>

#include "core/statements/hot_statements.hpp"
#include "core/statements/plan_args.hpp"
#include "extension/pg/pg_error.hpp"
#include "extension/pg/postgres.hpp"

namespace idem::hot {

constexpr int kMaxPlanArgs = 24;

struct KeptPlan {
  const char* sql;
  int nargs;
  Oid types[kMaxPlanArgs];
  SPIPlanPtr plan;  // nullptr until first use
};

// One statement kept once per set of tables it names (on Citus: the shards of each tenant a
// backend serves), its text made from the names at first use. Plans are never dropped: a backend
// keeps at most one per shard it wrote.
class KeptPlanPerTables {
 public:
  using Text = std::string (*)(const statements::Tables&);
  // `shape`: the argument count and types (its sql is unused).
  KeptPlanPerTables(Text text, const KeptPlan& shape) : text_(text), shape_(shape) {}
  KeptPlan& of(const statements::Tables& tables);

 private:
  struct Kept {
    std::string sql;
    KeptPlan plan;
  };
  Text text_;
  KeptPlan shape_;
  std::unordered_map<std::string, Kept> kept_;  // by the tables' names; elements never move
};

// One argument or column value: SQL NULL unless set.
struct Value {
  Datum datum = 0;
  bool null = true;
  static Value of(Datum d) { return Value{d, false}; }
};

// Values for one execution (statements::PlanArgs: bounded, plain data).
struct Args : statements::PlanArgs<Datum, kMaxPlanArgs> {
  Args& add(Value v) {
    PlanArgs::add(v.datum, v.null);
    return *this;
  }
  Args& add(Datum value) { return add(Value::of(value)); }
  Args& add_null() { return add(Value{}); }
};

// Argument n of the calling SQL function, NULL as NULL.
inline Value arg_value(FunctionCallInfo fcinfo, int n) {
  return PG_ARGISNULL(n) ? Value{} : Value::of(PG_GETARG_DATUM(n));
}

// SPI for the hot path, one guard each: the same failures as elog(ERROR) with the same text.
void spi_connect();
void spi_finish();

// Runs `plan` (preparing and keeping it on first use) inside an open SPI connection; raises
// "pg_idempotency: <failure>" unless SPI answers `expected`; returns SPI_processed. Not
// read-only, as PL/pgSQL runs a VOLATILE function's statements: each one takes a new snapshot,
// so under READ COMMITTED it sees what the last writer committed.
uint64 execute(KeptPlan& plan, const Args& args, long max_rows, int expected, const char* failure);

// The same, read-only under the latest snapshot: what is committed now, even inside a REPEATABLE
// READ transaction (Citus's metadata, which its own routing reads that way).
uint64 execute_latest(KeptPlan& plan, const Args& args, long max_rows, int expected, const char* failure);

// Column `column` (1-based) of result row `row` of the last execute, NULL as NULL.
Value column(int column, uint64 row = 0);

}  // namespace idem::hot
