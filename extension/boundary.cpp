// The ereport half of the boundary, kept out of line so no template instance grows a longjmp.
#include "extension/boundary.hpp"

namespace idem::boundary_detail {

void raise(const Failure& failure) {
  if (failure.pg_error != nullptr) {
    ReThrowError(failure.pg_error);
  }
  const int code = MAKE_SQLSTATE(failure.sqlstate[0], failure.sqlstate[1], failure.sqlstate[2],
                                 failure.sqlstate[3], failure.sqlstate[4]);
  if (failure.hint[0] != '\0') {
    ereport(ERROR, (errcode(code), errmsg("%s", failure.message), errhint("%s", failure.hint)));
  }
  ereport(ERROR, (errcode(code), errmsg("%s", failure.message)));
  pg_unreachable();
}

}  // namespace idem::boundary_detail
