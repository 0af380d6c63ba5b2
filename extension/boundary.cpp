// The ereport half of the boundary, kept out of line so no template instance grows a longjmp.
#include "extension/boundary.hpp"

namespace idem::boundary_detail {

void raise(const Failure& failure) {
  if (failure.pg_error != nullptr) {
    ReThrowError(failure.pg_error);
  }
  const int code = MAKE_SQLSTATE(failure.sqlstate[0], failure.sqlstate[1], failure.sqlstate[2],
                                 failure.sqlstate[3], failure.sqlstate[4]);
  ereport(ERROR, (errcode(code), errmsg("%s", failure.message),
                  failure.hint[0] != '\0' ? errhint("%s", failure.hint) : 0,
                  failure.detail[0] != '\0' ? errdetail("%s", failure.detail) : 0,
                  failure.schema[0] != '\0' ? err_generic_string(PG_DIAG_SCHEMA_NAME, failure.schema) : 0,
                  failure.table[0] != '\0' ? err_generic_string(PG_DIAG_TABLE_NAME, failure.table) : 0,
                  failure.constraint[0] != '\0' ? err_generic_string(PG_DIAG_CONSTRAINT_NAME, failure.constraint) : 0));
  pg_unreachable();
}

}  // namespace idem::boundary_detail
