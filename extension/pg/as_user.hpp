// Running a few PostgreSQL calls as another role, the way ri_triggers.c checks a foreign key as
// the table's owner: SECURITY_LOCAL_USERID_CHANGE, undone on return and, after an error, by the
// (sub)transaction's abort.
#pragma once

#include "extension/pg/pg_error.hpp"
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

// The same, with search_path pinned to pg_catalog, pg_temp as a SECURITY DEFINER function's SET
// clause pins it (fmgr's way: a GUC nest level, undone on return or by the abort after an error):
// for statements run outside any function of ours, at commit or from a hook, where the session's
// search_path could otherwise resolve an operator of theirs to a function of the caller's.
template <typename Body>
void as_owner(Oid role, Body body) {
  const int level = pg::call(NewGUCNestLevel);
  (void)pg::call(set_config_option, "search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
  as_user(role, body);
  pg::call(AtEOXact_GUC, true, level);
}

}  // namespace idem::pg
