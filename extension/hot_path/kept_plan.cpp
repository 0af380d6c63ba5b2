#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {

// Called inside pg::guarded by the hot path: plain C, nothing here has a destructor.
int execute(KeptPlan& plan, const Args& args, long max_rows) {
  if (plan.plan == nullptr) {
    SPIPlanPtr prepared = SPI_prepare(plan.sql, plan.nargs, plan.types);
    if (prepared == nullptr) elog(ERROR, "pg_idempotency: could not prepare \"%s\": %s", plan.sql, SPI_result_code_string(SPI_result));
    if (SPI_keepplan(prepared) != 0) elog(ERROR, "pg_idempotency: could not keep the plan of \"%s\"", plan.sql);
    plan.plan = prepared;
  }
  if (args.n != plan.nargs) elog(ERROR, "pg_idempotency: %d arguments for \"%s\", which takes %d", args.n, plan.sql, plan.nargs);
  return SPI_execute_plan(plan.plan, const_cast<Datum*>(args.values), args.nulls, false, max_rows);
}

Datum column(int column, bool* is_null) {
  return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, is_null);
}

}  // namespace idem::hot
