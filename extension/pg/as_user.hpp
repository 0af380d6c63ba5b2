// Running a few PostgreSQL calls as another role, the way ri_triggers.c checks a foreign key as
// the table's owner: SECURITY_LOCAL_USERID_CHANGE, undone on return and, after an error, by the
// (sub)transaction's abort.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem::pg {

// body() may throw (a guarded call's PgError, our Error): the user is then restored by the
// (sub)transaction's abort, as after an elog, since every error ends at the boundary's ereport.
template <typename Body>
void as_user(Oid role, Body body) {
  Oid saved_user;
  int saved_context;
  GetUserIdAndSecContext(&saved_user, &saved_context);
  SetUserIdAndSecContext(role, saved_context | SECURITY_LOCAL_USERID_CHANGE);
  body();
  SetUserIdAndSecContext(saved_user, saved_context);
}

}  // namespace idem::pg
