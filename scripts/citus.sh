#!/usr/bin/env bash
# A throwaway Citus cluster for the multi-node tests: a coordinator and two workers on loopback,
# each its own data directory under .citus/, running the private server copy with Citus
# (scripts/citus-install.sh builds it once from ../shared/vendor/) and this checkout's extension.
# usage: scripts/citus.sh start|stop|status|url [node] [db]|psql [node] [psql args...]|database NAME|drop-database NAME|destroy
#   CITUS_PORT: the coordinator's port (default 54370); the workers take the next two.
#   start   builds what is missing, starts the three servers, makes one cluster of them (Citus
#           in the postgres database of each, the workers added to the coordinator). A no-op for
#           servers already running from .citus/.
#   url     the coordinator's URL; `url worker1` / `url worker2` the workers' (a third argument
#           names another database than postgres).
#   database NAME   a database of that name on every node, made one cluster as postgres is (the
#           tests' own, dropped again by drop-database NAME): Citus keeps its metadata per database.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${CITUS_PORT:-54370}
BASE=$ROOT/.citus
NODES=(coordinator worker1 worker2)

# shellcheck source=scripts/cluster.sh
source "$ROOT/scripts/cluster.sh"      # as_server, init_durable_cluster, pg_install_server
# shellcheck source=scripts/citus-install.sh
source "$ROOT/scripts/citus-install.sh" # citus_install
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"          # build_and_install_extension

node_port() {
  local i
  for i in "${!NODES[@]}"; do
    [ "${NODES[$i]}" = "$1" ] && { echo $((PORT + i)); return 0; }
  done
  echo "citus.sh: no node named $1 (coordinator, worker1, worker2)" >&2
  return 1
}
node_url() { echo "postgresql://postgres@127.0.0.1:$(node_port "${1:-coordinator}")/${2:-postgres}"; }
node_data() { echo "$BASE/$1/data"; }
node_running() { as_server "$(pg_server_bindir)/pg_ctl" -D "$(node_data "$1")" status >/dev/null 2>&1; }
node_sql() { PGOPTIONS="-c client_min_messages=warning" psql "$(node_url "$1" "${DB:-postgres}")" -X -qAt -v ON_ERROR_STOP=1 -c "$2"; }

# The cluster's place must be one the server's user can enter (as pg.sh's .pg).
place() {
  [ -e "$BASE" ] && return 0
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$ROOT"; then
    local elsewhere="/var/tmp/pg_idempotency-citus-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
    mkdir -p "$elsewhere" && ln -s "$elsewhere" "$BASE"
  else
    mkdir -p "$BASE"
  fi
  BASE=$(readlink -f "$BASE")
}

start_node() {
  local node=$1 port data dir
  port=$(node_port "$node")
  dir=$BASE/$node
  data=$dir/data
  node_running "$node" && return 0
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$dir/run"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir" "$dir/run"
    init_durable_cluster "$PG_BINDIR" "$data" "$dir/run" "$dir/initdb.log"
    # A later line wins over init_durable_cluster's: Citus must be loaded first, pg_idempotency
    # after it (its planner hook then runs before Citus's: docs/citus.md); shard moves
    # copy through logical replication.
    as_server tee -a "$data/postgresql.conf" >/dev/null <<CONF
shared_preload_libraries = 'citus,pg_stat_statements,pg_idempotency'
wal_level = logical
max_connections = 200
shared_buffers = 128MB
max_prepared_transactions = 100
citus.log_remote_commands = off
CONF
  fi
  if ! as_server "$PG_BINDIR/pg_ctl" -D "$data" -l "$dir/server.log" -o "-p $port" -w -t 60 start >/dev/null; then
    echo "citus.sh: $node did not start on port $port; last log lines:" >&2
    tail -20 "$dir/server.log" >&2
    return 1
  fi
}

# One cluster: Citus in every node's postgres database, the workers known to the coordinator.
join() {
  local node w
  for node in "${NODES[@]}"; do node_sql "$node" "CREATE EXTENSION IF NOT EXISTS citus"; done
  node_sql coordinator "SELECT citus_set_coordinator_host('127.0.0.1', $(node_port coordinator))" >/dev/null
  for w in worker1 worker2; do
    node_sql coordinator "SELECT citus_add_node('127.0.0.1', $(node_port "$w"))
      WHERE NOT EXISTS (SELECT FROM pg_dist_node WHERE nodeport = $(node_port "$w"))" >/dev/null
  done
}

database() {
  local node
  for node in "${NODES[@]}"; do
    DB=postgres node_sql "$node" "SELECT 1 FROM pg_database WHERE datname = '$1'" | grep -q 1 ||
      PGOPTIONS="-c client_min_messages=warning" DB=postgres node_sql "$node" "CREATE DATABASE \"$1\""
  done
  DB=$1 join
}

drop_database() {
  local node
  for node in "${NODES[@]}"; do
    DB=postgres node_sql "$node" "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" >/dev/null
  done
}

start() {
  citus_install
  build_and_install_extension
  reserve_server_ports
  place
  local node started=0
  for node in "${NODES[@]}"; do
    node_running "$node" || started=1
    start_node "$node"
  done
  # What the servers preloaded (citus-test.sh compares it with the library just built).
  [ "$started" = 0 ] || sha256sum "$PG_PKGLIBDIR/pg_idempotency.so" | cut -d' ' -f1 >"$BASE/library.sha256"
  join
}

stop() {
  local node
  [ -d "$BASE" ] || return 0
  for node in "${NODES[@]}"; do
    if [ -f "$(node_data "$node")/PG_VERSION" ] && node_running "$node"; then
      as_server "$(pg_server_bindir)/pg_ctl" -D "$(node_data "$node")" -m fast -w stop >/dev/null
    fi
  done
}

status() {
  local node up=0
  for node in "${NODES[@]}"; do
    if [ -d "$BASE" ] && node_running "$node"; then
      echo "$node: running on port $(node_port "$node") ($(node_url "$node"))"; up=$((up + 1))
    else
      echo "$node: stopped"
    fi
  done
  [ "$up" -eq "${#NODES[@]}" ] || exit 3
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  url) node_url "${2:-coordinator}" "${3:-postgres}" ;;
  database) database "${2:?usage: $0 database NAME}" ;;
  drop-database) drop_database "${2:?usage: $0 drop-database NAME}" ;;
  psql) shift; node=coordinator
        case "${1:-}" in coordinator|worker1|worker2) node=$1; shift ;; esac
        exec psql "$(node_url "$node")" -X -v ON_ERROR_STOP=1 "$@" ;;
  destroy) stop; rm -rf "$(readlink -f "$BASE")" "$BASE" ;;
  *) echo "usage: $0 start|stop|status|url [node] [db]|psql [node] [args]|database NAME|drop-database NAME|destroy" >&2; exit 2 ;;
esac
