#include "extension/transitions/transition_log.hpp"

#include "extension/pg/as_user.hpp"

namespace idem::transitions {
namespace {

SPIPlanPtr log_plan = nullptr;  // kept for the backend's life

void insert_log_row(const LogEntry& e) {
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
  if (log_plan == nullptr) {
    Oid types[10] = {TEXTOID, OIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, BOOLOID, TEXTOID, TEXTOID, TEXTOID};
    SPIPlanPtr plan = SPI_prepare(
        "INSERT INTO idem.transition_log (machine, relid, table_name, row_key, from_state, to_state, guard_name, "
        "guard_result, outcome, tenant_id) VALUES ($1, $2, $9, $3, $4, $5, $6, $7, $8, $10)",
        10, types);
    if (plan == nullptr || SPI_keepplan(plan) != 0) elog(ERROR, "pg_idempotency: could not prepare the transition log insert");
    log_plan = plan;
  }
  auto text = [](const char* s) { return s ? CStringGetTextDatum(s) : Datum(0); };
  Datum values[10] = {text(e.machine), ObjectIdGetDatum(e.relid), text(e.row_key), text(e.from), text(e.to),
                      text(e.guard_name), BoolGetDatum(e.guard_result == 1), text(e.outcome), text(e.table_name),
                      text(e.tenant)};
  char nulls[11] = "          ";
  if (!e.row_key) nulls[2] = 'n';
  if (!e.from) nulls[3] = 'n';
  if (!e.guard_name) nulls[5] = 'n';
  if (e.guard_result < 0) nulls[6] = 'n';
  if (SPI_execute_plan(log_plan, values, nulls, false, 0) != SPI_OK_INSERT) {
    elog(ERROR, "pg_idempotency: could not log the transition");
  }
  SPI_finish();
}

}  // namespace

// As the log's owner, the way ri_triggers.c checks a foreign key as the table's owner.
void append_log(const LogEntry& entry, Oid owner) {
  pg::as_user(owner, [&] { insert_log_row(entry); });
}

}  // namespace idem::transitions
