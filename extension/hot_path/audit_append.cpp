// idem._audit as C: the audit INSERT through a kept plan. As an SQL function (with its pinned
// search_path) it would set the function up again at each call, most of what it costs.
#include "extension/hot_path/audit_append.hpp"

#include <string>

#include "extension/boundary.hpp"

namespace idem::hot {
namespace {

const std::string kInsertAuditSql = statements::audit_insert();

KeptPlan insert_audit{kInsertAuditSql.c_str(),
                      kAuditColumns,
                      {
#define AUDIT_COLUMN(name, type) type,
#include "core/statements/audit_columns.def"
#undef AUDIT_COLUMN
                      },
                      nullptr};

std::string audit_insert_sql(const statements::Tables& tables) { return statements::audit_insert(tables); }
KeptPlanPerTables insert_audit_on_shard{audit_insert_sql, insert_audit};

// idem._audit(...): called by the PL/pgSQL paths, as the owner; its arguments are the columns.
Datum audit(FunctionCallInfo fcinfo) {
  Args row;
  for (int i = 0; i < kAuditColumns; ++i) row.add(arg_value(fcinfo, i));
  spi_connect();
  (void)execute(insert_audit, row, 0, SPI_OK_INSERT, "could not append the audit row");
  spi_finish();
  PG_RETURN_VOID();
}

}  // namespace

void append_audit(const AuditRow& row, const statements::Tables* shards) {
  Args args;
#define AUDIT_COLUMN(name, type) args.add(row.name);
#include "core/statements/audit_columns.def"
#undef AUDIT_COLUMN
  KeptPlan& plan = shards == nullptr ? insert_audit : insert_audit_on_shard.of(*shards);
  (void)execute(plan, args, 0, SPI_OK_INSERT, "could not append the audit row");
}

}  // namespace idem::hot

IDEM_SQL_FUNCTION(idem_audit, idem::hot::audit)
