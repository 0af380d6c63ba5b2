#!/usr/bin/env bash
# with-general-path.sh CMD...: runs CMD with idem.fast_path = off on the running server, so every
# acquire and complete takes the PL/pgSQL general path (as PostgreSQL tests its planner with
# debug_parallel_query). Server-wide (tests connect as many roles; the setting is a
# superuser's), reset afterwards whatever happens. PGPORT: the running server's.
set -euo pipefail
cd "$(dirname "$0")/.."
URL=$(scripts/pg.sh url)
set_fast_path() {
  psql "$URL" -XAtq -v ON_ERROR_STOP=1 -c "LOAD 'pg_idempotency'" -c "ALTER SYSTEM $1" -c "SELECT pg_reload_conf()" >/dev/null
}
trap 'set_fast_path "RESET idem.fast_path"' EXIT
set_fast_path "SET idem.fast_path = off"
[ "$(psql "$URL" -XAtq -c "LOAD 'pg_idempotency'" -c 'SHOW idem.fast_path')" = off ] ||
  { echo "with-general-path: idem.fast_path did not turn off" >&2; exit 1; }
"$@"
