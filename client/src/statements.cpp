#include "statements.hpp"

namespace idem::statements {

#define IDEM_ACQUIRE_COLUMNS                                                                  \
  "SELECT outcome, handle, attempt, recovery_point, recovery_data::text, response_status,"     \
  " response_headers::text, response_body, retry_after, handler_key, key_reuse_differs::text"

#define IDEM_ACQUIRE_CALL                                                                                     \
  "idem.acquire($1, $2, $3::bytea, caller => $4, resource => $5, lease => $6::interval, ttl => $7::interval," \
  " mutation_type => $8, payload_members => $9::bytea)"

const std::vector<pg::Statement> kStatements = {
    // acquire as a scalar, its composite taken apart above it: no function scan and tuplestore
    // per call (unaudited replays about 15 % faster, audited ones and new keys alike within the
    // noise: bench/pgbench/replay.sql beside replay_function_scan.sql, docs/hot-path.md).
    // OFFSET 0 keeps the subquery whole: flattened, each (a).column would call acquire again.
    {kAcquire,
     "SELECT (a).outcome, (a).handle, (a).attempt, (a).recovery_point, (a).recovery_data::text, (a).response_status,"
     " (a).response_headers::text, (a).response_body, (a).retry_after, (a).handler_key, (a).key_reuse_differs::text"
     " FROM (SELECT " IDEM_ACQUIRE_CALL " AS a OFFSET 0) s"},
    // idem.key_scope = route for this transaction, set before acquire runs: acquire's argument
    // reads the setting's value, so the lateral call comes after it (and adds nothing to it).
    {kAcquireRouteScoped,
     IDEM_ACQUIRE_COLUMNS
     " FROM (SELECT pg_catalog.set_config('idem.key_scope', 'route', true) AS scope) s,"
     " LATERAL idem.acquire($1, $2, $3::bytea, caller => $4, resource => $5 || left(s.scope, 0),"
     " lease => $6::interval, ttl => $7::interval, mutation_type => $8, payload_members => $9::bytea)"},
    {kComplete,
     "SELECT idem.complete($1, $2::bigint, $3::integer, $4::jsonb, $5::bytea, $6, $7::jsonb, $8, $9::boolean)"},
    {kEmit, "SELECT idem.emit($1, $2, $3::jsonb, $4)"},
    {kCheckpoint, "SELECT idem.checkpoint($1, $2::bigint, $3, $4::jsonb, $5::boolean)"},
    {kRelease, "SELECT idem.release($1, $2::bigint, $3, $4::boolean)"},
};

const std::vector<pg::Statement> kCitusStatements = [] {
  std::vector<pg::Statement> statements = kStatements;
  for (pg::Statement& s : statements) {
    if (s.name == std::string(kAcquire)) {
      // Citus delegates a bare call only (SELECT ... FROM f(...)), not one inside a subquery.
      s.sql = IDEM_ACQUIRE_COLUMNS " FROM " IDEM_ACQUIRE_CALL;
    } else if (s.name == std::string(kComplete)) {
      s.sql = "SELECT idem.complete($1, $2, $3::bigint, $4::integer, $5::jsonb, $6::bytea, $7, $8::jsonb, $9, $10::boolean)";
    } else if (s.name == std::string(kCheckpoint)) {
      s.sql = "SELECT idem.checkpoint($1, $2, $3::bigint, $4, $5::jsonb, $6::boolean)";
    } else if (s.name == std::string(kRelease)) {
      s.sql = "SELECT idem.release($1, $2, $3::bigint, $4, $5::boolean)";
    }
  }
  return statements;
}();

// The parameters of complete, checkpoint or release: with the tenant first on Citus.
std::vector<SqlValue> tenant_first(bool citus, const std::string& tenant, std::vector<SqlValue> params) {
  if (citus) params.insert(params.begin(), tenant);
  return params;
}

}  // namespace idem::statements
