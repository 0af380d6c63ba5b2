#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster under .pg/ for the demo, the tests and the benchmarks.
# usage: scripts/pg.sh start|stop|status|url|psql [psql args...]
# PGPORT overrides the port (default 54320). Run as root, the server runs as `postgres`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${PGPORT:-54320}
LINK="$ROOT/.pg"
# Paths the server uses must not pass through a directory it cannot enter: resolve the link.
resolve_paths() {
  BASE=$(readlink -f "$LINK" 2>/dev/null || echo "$LINK")
  DATA="$BASE/data"
  RUN="$BASE/run"
  LOG="$BASE/server.log"
}
resolve_paths
BIN=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[ -x "$BIN/initdb" ] || BIN=/usr/lib/postgresql/15/bin

# PostgreSQL refuses to run as root: do the server's work as `postgres` then.
as_server() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")  # cd /: the checkout may be closed to postgres
  else
    "$@"
  fi
}

# The cluster lives in .pg/. When the server's user cannot reach the checkout (a clone under a
# 0700 home directory, say), .pg becomes a link to a directory it can reach.
place_cluster() {
  [ -e "$LINK" ] && return 0
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$ROOT"; then
    local elsewhere="/var/tmp/pg_idempotency-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
    mkdir -p "$elsewhere"
    ln -s "$elsewhere" "$LINK"
    echo "pg.sh: postgres cannot enter $ROOT; the cluster lives in $elsewhere (linked from .pg)" >&2
  fi
}

url() { echo "postgresql://postgres@127.0.0.1:${PORT}/postgres"; }

running() { as_server "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

init_cluster() {
  place_cluster
  resolve_paths
  mkdir -p "$BASE" "$RUN"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$BASE" "$RUN"; fi
  # postgres must be able to reach the repo; a 0700 home directory would stop it here.
  as_server test -x "$BASE" || { echo "pg.sh: user postgres cannot enter $BASE" >&2; exit 1; }
  as_server "$BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$BASE/initdb.log"
  # Durable by design: acquire/complete refuse a store without fsync or synchronous_commit.
  cat >>"$DATA/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$RUN'
fsync = on
synchronous_commit = on
max_connections = 100
shared_buffers = 256MB
shared_preload_libraries = 'pg_stat_statements'
max_prepared_transactions = 10
log_min_messages = warning
CONF
}

start() {
  [ -f "$DATA/PG_VERSION" ] || init_cluster
  if running; then return 0; fi
  as_server "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -o "-p $PORT" -w -t 60 start >/dev/null ||
    { echo "pg.sh: server did not start; last log lines:" >&2; tail -20 "$LOG" >&2; exit 1; }
}

stop() {
  if [ -f "$DATA/PG_VERSION" ] && running; then
    as_server "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if running; then echo "running on port $PORT ($(url))"; else echo "stopped"; exit 3; fi ;;
  url) url ;;
  psql) shift; exec psql "$(url)" -v ON_ERROR_STOP=1 "$@" ;;
  destroy) stop; rm -rf "$BASE" "$LINK" ;;
  *) echo "usage: $0 start|stop|status|url|psql [args]|destroy" >&2; exit 2 ;;
esac
