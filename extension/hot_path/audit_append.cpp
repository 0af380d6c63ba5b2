// idem._audit as C: the audit INSERT through a kept plan. As an SQL function (with its pinned
// search_path) it cost about 60 us a call, most of it setting up the function each time.
#include "extension/hot_path/audit_append.hpp"

#include "extension/boundary.hpp"

namespace idem::hot {
namespace {

KeptPlan insert_audit{
    "INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, generation, attempt,"
    " mutation_type, outcome, handler_called, order_id, handler_response, local_status, error_message,"
    " recovery_point, retry_count, attempted_at, completed_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
    kAuditColumns,
    {TEXTOID, BYTEAOID, TEXTOID, TEXTOID, TEXTOID, INT4OID, INT8OID, TEXTOID, TEXTOID, BOOLOID, TEXTOID, JSONBOID,
     TEXTOID, TEXTOID, TEXTOID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID},
    nullptr};

// idem._audit(...): called by the PL/pgSQL paths, as the owner.
Datum audit(FunctionCallInfo fcinfo) {
  pg::guarded([&] {
    Args row;
    for (int i = 0; i < kAuditColumns; ++i) add_arg(fcinfo, i, row);
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "pg_idempotency: SPI_connect failed");
    append_audit(row);
    SPI_finish();
  });
  PG_RETURN_VOID();
}

}  // namespace

void append_audit(const Args& row) {
  if (execute(insert_audit, row, 0) != SPI_OK_INSERT) elog(ERROR, "pg_idempotency: could not append the audit row");
}

}  // namespace idem::hot

IDEM_SQL_FUNCTION(idem_audit, idem::hot::audit)
