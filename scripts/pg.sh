#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster under .pg/ for the demo, the tests and the benchmarks.
# usage: scripts/pg.sh start|stop|status|owned|url|psql [psql args...]|destroy
# PGPORT overrides the port (default 54320). Run as root, the server runs as `postgres`. The
# server is this checkout's private copy (build/pg-install/, scripts/pg-install.sh), made on start.
#   start   starts it; a no-op when this checkout's cluster already serves $PGPORT. Fails, saying
#           which data directory owns the port, when another cluster or program listens on it.
#   owned   exits 0 only when the server answering on $PGPORT is this checkout's cluster.
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

# shellcheck source=scripts/cluster.sh
source "$ROOT/scripts/cluster.sh"  # as_server, init_durable_cluster, pg_install_server
BIN=$(pg_server_bindir)

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

# The port our running cluster was started on (its postmaster.pid), empty when it is not running.
running_port() {
  if running; then sed -n 4p "$DATA/postmaster.pid" 2>/dev/null || true; fi
}

# same_dir A B: A and B name the same directory once links are resolved (.pg may be a link).
same_dir() {
  [ "$(readlink -f -- "$1" 2>/dev/null || echo "$1")" = "$(readlink -f -- "$2" 2>/dev/null || echo "$2")" ]
}

# port_busy [PORT]: something accepts TCP connections on 127.0.0.1:PORT (bash's /dev/tcp).
# shellcheck disable=SC2016  # $1 is the inner shell's
port_busy() { timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "${1:-$PORT}" 2>/dev/null; }

# The data directory the server on $PORT reports; empty when it does not answer or will not say.
reported_data_dir() {
  PGCONNECT_TIMEOUT=3 "$BIN/psql" -w -X -qAt \
    "host=127.0.0.1 port=$PORT user=postgres dbname=postgres sslmode=disable" \
    -c "SHOW data_directory" 2>/dev/null || true
}

# port_owner: who listens on $PORT. Sets OWNER to none, ours, other-pg or other-program, and
# OWNER_DATA (the data directory, when known) and OWNER_WHAT (a description for messages).
port_owner() {
  OWNER=none OWNER_DATA="" OWNER_WHAT=""
  port_busy || return 0
  OWNER_DATA=$(reported_data_dir)
  if [ -z "$OWNER_DATA" ]; then
    # It does not answer as our clusters do (no trust for postgres, still starting, not
    # PostgreSQL): the listening process tells, when we may look (ss -p, /proc: root or its owner).
    local pid comm=""
    pid=$(ss -Hltnp "sport = :$PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2 || true)
    if [ -n "$pid" ]; then
      comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
      # A postmaster's working directory is its data directory.
      case "$comm" in postgres|postmaster) OWNER_DATA=$(readlink "/proc/$pid/cwd" 2>/dev/null || true) ;; esac
    fi
    if [ -z "$OWNER_DATA" ]; then
      if [ -n "$comm" ] && [ "$comm" != postgres ] && [ "$comm" != postmaster ]; then
        OWNER=other-program OWNER_WHAT="another program ($comm, pid $pid), not a PostgreSQL server"
      elif [ -n "$comm" ] || "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -t 3 >/dev/null 2>&1; then
        OWNER=other-pg OWNER_WHAT="a PostgreSQL server that does not say its data directory (it is not this checkout's: ours trusts user postgres on 127.0.0.1)"
      else
        OWNER=other-program OWNER_WHAT="a program that does not answer as PostgreSQL"
      fi
      return 0
    fi
  fi
  if same_dir "$OWNER_DATA" "$DATA"; then
    OWNER=ours OWNER_WHAT="this checkout's cluster (data directory $OWNER_DATA)"
  else
    OWNER=other-pg OWNER_WHAT="another PostgreSQL cluster, data directory $OWNER_DATA"
  fi
}

# A port near $PORT that nothing listens on, for the advice below.
free_port() {
  local p
  for p in $(seq $((PORT + 1)) $((PORT + 40))); do
    port_busy "$p" || { echo "$p"; return 0; }
  done
  echo $((PORT + 1))
}

conflict() {
  local p
  p=$(free_port)
  echo "pg.sh: port $PORT is taken by $OWNER_WHAT; this checkout's cluster is $DATA." >&2
  echo "pg.sh: it is left alone. Choose another port for this checkout, e.g. PGPORT=$p make test (or PGPORT=$p scripts/pg.sh start), or stop what holds $PORT." >&2
  exit 1
}

init_cluster() {
  place_cluster
  resolve_paths
  mkdir -p "$BASE" "$RUN"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$BASE" "$RUN"; fi
  # postgres must be able to reach the repo; a 0700 home directory would stop it here.
  as_server test -x "$BASE" || { echo "pg.sh: user postgres cannot enter $BASE" >&2; exit 1; }
  init_durable_cluster "$BIN" "$DATA" "$RUN" "$BASE/initdb.log"
}

start() {
  port_owner
  case "$OWNER" in
    ours)
      # Already serving (perhaps still starting up): wait until it accepts connections.
      local _
      for _ in $(seq 60); do
        [ -n "$(reported_data_dir)" ] && return 0
        sleep 1
      done
      echo "pg.sh: this checkout's cluster holds port $PORT but does not answer; see $LOG" >&2
      exit 1 ;;
    other-pg|other-program) conflict ;;
  esac
  local other
  other=$(running_port)
  if [ "$other" = "$PORT" ] && owned >/dev/null 2>&1; then return 0; fi  # the probe above missed it
  if [ -n "$other" ]; then
    echo "pg.sh: this checkout's cluster ($DATA) is already running, on port $other, not $PORT: use PGPORT=$other, or scripts/pg.sh stop first" >&2
    exit 1
  fi
  pg_install_server || exit 1
  BIN=$PG_BINDIR
  [ -f "$DATA/PG_VERSION" ] || init_cluster
  reserve_server_ports
  if ! as_server "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -o "-p $PORT" -w -t 60 start >/dev/null; then
    port_owner
    case "$OWNER" in other-pg|other-program) conflict ;; esac  # taken while we were starting
    echo "pg.sh: server did not start; last log lines:" >&2
    tail -20 "$LOG" >&2
    exit 1
  fi
  owned >/dev/null || exit 1
}

# owned: the server answering on $PORT is this checkout's cluster (its data_directory is ours).
owned() {
  local reported
  reported=$(reported_data_dir)
  if [ -n "$reported" ] && same_dir "$reported" "$DATA"; then
    echo "port $PORT: this checkout's cluster ($DATA)"
    return 0
  fi
  port_owner
  if [ "$OWNER" = none ]; then
    echo "pg.sh: nothing answers on port $PORT (this checkout's cluster is $DATA)" >&2
  else
    echo "pg.sh: port $PORT is served by $OWNER_WHAT, not by this checkout's cluster ($DATA)" >&2
  fi
  return 1
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
    if running; then
      PORT=$(running_port)  # the port it was started on, which may not be $PGPORT
      echo "running on port ${PORT:-?} ($(url))"
    else
      echo "stopped"; exit 3
    fi ;;
  owned) owned ;;
  url) url ;;
  psql) shift; exec psql "$(url)" -v ON_ERROR_STOP=1 "$@" ;;
  destroy) stop; rm -rf "$BASE" "$LINK" ;;
  *) echo "usage: $0 start|stop|status|owned|url|psql [args]|destroy" >&2; exit 2 ;;
esac
