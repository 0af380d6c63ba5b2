#include "extension/hot_path/kept_plan.hpp"

namespace idem::hot {
namespace {

void connect_unsafe() {
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
}

// Plain C on plain data: called only through pg::call. latest: read-only, under the latest
// snapshot (pushed here, popped by the same call or by the abort an error brings).
uint64 execute_unsafe(KeptPlan* plan, const Args* args, long max_rows, int expected, const char* failure, bool latest) {
  if (plan->plan == nullptr) {
    SPIPlanPtr prepared = SPI_prepare(plan->sql, plan->nargs, plan->types);
    if (prepared == nullptr) elog(ERROR, "pg_idempotency: could not prepare \"%s\": %s", plan->sql, SPI_result_code_string(SPI_result));
    if (SPI_keepplan(prepared) != 0) elog(ERROR, "pg_idempotency: could not keep the plan of \"%s\"", plan->sql);
    plan->plan = prepared;
  }
  if (args->n != plan->nargs) elog(ERROR, "pg_idempotency: %d arguments for \"%s\", which takes %d", args->n, plan->sql, plan->nargs);
  if (latest) PushActiveSnapshot(GetLatestSnapshot());
  if (SPI_execute_plan(plan->plan, const_cast<Datum*>(args->values), args->nulls, latest, max_rows) != expected) {
    elog(ERROR, "pg_idempotency: %s", failure);
  }
  if (latest) PopActiveSnapshot();
  return SPI_processed;
}

}  // namespace

void spi_connect() { pg::call(connect_unsafe); }

void spi_finish() { (void)pg::call(SPI_finish); }

uint64 execute(KeptPlan& plan, const Args& args, long max_rows, int expected, const char* failure) {
  return pg::call(execute_unsafe, &plan, &args, max_rows, expected, failure, false);
}

uint64 execute_latest(KeptPlan& plan, const Args& args, long max_rows, int expected, const char* failure) {
  return pg::call(execute_unsafe, &plan, &args, max_rows, expected, failure, true);
}

KeptPlan& KeptPlanPerTables::of(const statements::Tables& tables) {
  std::string names = tables.keys;
  names.append("\n").append(tables.retired_keys).append("\n").append(tables.mutations);
  auto it = kept_.find(names);
  if (it == kept_.end()) {
    it = kept_.emplace(std::move(names), Kept{text_(tables), shape_}).first;
    it->second.plan.sql = it->second.sql.c_str();
    it->second.plan.plan = nullptr;
  }
  return it->second.plan;
}

Value column(int column, uint64 row) {
  bool is_null = true;
  const Datum d = pg::call(SPI_getbinval, SPI_tuptable->vals[row], SPI_tuptable->tupdesc, column, &is_null);
  return is_null ? Value{} : Value::of(d);
}

}  // namespace idem::hot
