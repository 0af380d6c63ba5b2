#!/usr/bin/env bash
# The entrypoint of docker/postgres.Dockerfile: Debian's PostgreSQL 15 server, run as postgres.
# On an empty $PGDATA it does what the official postgres image's entrypoint does, in the part the
# demo needs: initdb (UTF8), a pg_hba line for TCP clients with POSTGRES_HOST_AUTH_METHOD, the
# files of /docker-entrypoint-initdb.d/ run against a server listening on its Unix socket only,
# then that server stopped. Then it runs the command (postgres and its -c options).
set -Eeuo pipefail

: "${PGDATA:?PGDATA is not set}"
initdb_dir=/docker-entrypoint-initdb.d

# run_init_file FILE: executable *.sh files run as programs, other *.sh are sourced, *.sql go to psql.
# shellcheck disable=SC1090  # the init files are the image's, found at run time
run_init_file() {
  case $1 in
    *.sh) if [ -x "$1" ]; then "$1"; else . "$1"; fi ;;
    *.sql) psql -v ON_ERROR_STOP=1 --username postgres --no-password --no-psqlrc --dbname postgres -f "$1" ;;
    *) echo "postgres-entrypoint: ignoring $1" ;;
  esac
}

init_cluster() {
  local auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256} pwfile=()
  if [ "$auth" != trust ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
      echo "postgres-entrypoint: set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust, demo only)" >&2
      exit 1
    fi
    pwfile=(--pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD"))
  fi
  # pg_idempotency refuses databases whose encoding is not UTF8.
  initdb --username=postgres --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host="$auth" \
    "${pwfile[@]}" >/dev/null
  # initdb's host lines cover loopback only; clients come from other containers.
  printf 'host all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"

  # Socket only while the init files run: a TCP health check passes once the real server is up.
  pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait --silent start
  local f
  for f in "$initdb_dir"/*; do
    [ -e "$f" ] || continue
    echo "postgres-entrypoint: running $f"
    run_init_file "$f"
  done
  pg_ctl --pgdata="$PGDATA" --mode=fast --wait --silent stop
  echo "postgres-entrypoint: cluster initialised in $PGDATA"
}

if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  init_cluster
fi
exec "$@"
