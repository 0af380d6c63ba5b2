#!/usr/bin/env bash
# `make failover`: exactly-once across failovers. Sets up its own primary and synchronous standby
# (streaming replication, pg_basebackup), runs tests/failover's workload through idem::Client on a
# multi-host URI, and FAILOVER_COUNT times crashes the primary (pg_ctl -m immediate), promotes the
# standby and rebuilds the old primary as the new standby (pg_rewind, else a fresh pg_basebackup).
# After each failover the workload checks on the new primary that every acknowledged result replays
# byte for byte, that no key ran twice and that every unresolved key settles to one execution.
# The crashes take turns between three kinds (see crash below). Exits non-zero on any violation.
# Both servers are stopped and their directories deleted at the end, also on failure and Ctrl-C
# (FAILOVER_KEEP=1 keeps the directories: journal, logs, data). docs/reliability.md, "Failover".
#   FAILOVER_COUNT (20)        failovers
#   FAILOVER_ASYNC (0)         1: an asynchronous standby (synchronous_standby_names empty): what it
#                              loses is measured and reported, not a failure
#   FAILOVER_PORT_A/B (54350/54351), FAILOVER_BUILD_DIR (build), FAILOVER_INSTALL (1: build and
#   install the extension first, like make model; both servers run from the private server copy
#   build/pg-install/ either way), FAILOVER_LOAD_SECONDS (3: load before each
#   crash), FAILOVER_AFTER_SECONDS (2: load on the new primary once its standby is back)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

COUNT=${FAILOVER_COUNT:-20}
ASYNC=${FAILOVER_ASYNC:-0}
PORT_A=${FAILOVER_PORT_A:-54350}
PORT_B=${FAILOVER_PORT_B:-54351}
BUILD_DIR=${FAILOVER_BUILD_DIR:-build}
LOAD_SECONDS=${FAILOVER_LOAD_SECONDS:-3}
AFTER_SECONDS=${FAILOVER_AFTER_SECONDS:-2}
# The server's user must reach it: not under a home directory. One per checkout and port, as
# crash.sh's, so that two checkouts' runs on other ports do not refuse each other (the lock below).
BASE=/var/tmp/pg_idempotency-failover-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)-$PORT_A
DB=idem_failover
RUN_DIR=$BASE/run
JOURNAL=$BASE/journal
WORKLOAD=$ROOT/$BUILD_DIR/tests/failover/failover-workload
URI="postgresql://postgres@127.0.0.1:$PORT_A,127.0.0.1:$PORT_B/$DB?target_session_attrs=read-write&connect_timeout=2"

say() { echo "failover: $*"; }
die() { echo "failover: $*" >&2; exit 1; }

# shellcheck source=scripts/cluster.sh
source "$ROOT/scripts/cluster.sh"  # as_server, init_durable_cluster, PG_BINDIR
BIN=$PG_BINDIR  # this checkout's private server copy (pg_install_server below)

data_of() { echo "$BASE/$1/data"; }
port_of() { if [ "$1" = a ]; then echo "$PORT_A"; else echo "$PORT_B"; fi; }
sql() {  # sql NODE DB SQL: one statement, rows unaligned
  "$BIN/psql" "host=127.0.0.1 port=$(port_of "$1") user=postgres dbname=$2" -qAtX -v ON_ERROR_STOP=1 -c "$3"
}
# shellcheck disable=SC2016  # $1 is the inner shell's
port_busy() { timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }
running() { [ -f "$(data_of "$1")/postmaster.pid" ] && as_server "$BIN/pg_ctl" -D "$(data_of "$1")" status >/dev/null 2>&1; }

# ---- cleanup: whatever ends the run stops what it started ------------------------------------
LOAD_PID="" FROZEN_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$FROZEN_PID" ]; then kill -CONT "$FROZEN_PID" 2>/dev/null || true; fi
  if [ -n "$LOAD_PID" ] && kill -0 "$LOAD_PID" 2>/dev/null; then
    kill -TERM "$LOAD_PID" 2>/dev/null || true
    sleep 1
    kill -KILL "$LOAD_PID" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -d "$BASE" ]; then
    for node in a b; do
      [ -f "$BASE/$node/server.log" ] && { echo "--- last lines of node $node's server log"; tail -15 "$BASE/$node/server.log"; }
    done >&2
  fi
  for node in a b; do
    if running "$node"; then as_server "$BIN/pg_ctl" -D "$(data_of "$node")" -m immediate -w stop >/dev/null 2>&1 || true; fi
  done
  if [ "${FAILOVER_KEEP:-0}" = 1 ]; then
    echo "failover: FAILOVER_KEEP=1: servers stopped, $BASE kept (journal, logs, data directories)" >&2
  else
    rm -rf "$BASE" "$BASE.lock"
  fi
  exit "$rc"
}

# ---- the two nodes ---------------------------------------------------------------------------
# The settings pg.sh gives the project's cluster, plus what streaming replication and pg_rewind
# need. Every node has the same postgresql.conf (pg_basebackup and pg_rewind copy it); the port is
# given at start and primary_conninfo lives in postgresql.auto.conf, written per standby.
init_primary() {
  local data
  data=$(data_of a)
  init_durable_cluster "$BIN" "$data" "$RUN_DIR" "$BASE/a/initdb.log"
  local sync_names="'*'"
  [ "$ASYNC" = 1 ] && sync_names="''"
  as_server tee -a "$data/postgresql.conf" >/dev/null <<CONF
wal_level = replica
max_wal_senders = 10
wal_keep_size = '512MB'    # the WAL a rewound node needs to catch up (no replication slots)
wal_log_hints = on         # pg_rewind
hot_standby = on
synchronous_standby_names = $sync_names
CONF
  as_server tee "$data/pg_hba.conf" >/dev/null <<'HBA'
# scripts/failover.sh: user postgres only, on loopback, trusted; for tests, never for real data.
local all         postgres              trust
host  all         postgres 127.0.0.1/32 trust
local replication postgres              trust
host  replication postgres 127.0.0.1/32 trust
HBA
}

# make_standby NODE PRIMARY: NODE follows PRIMARY (standby.signal, primary_conninfo).
make_standby() {
  local data
  data=$(data_of "$1")
  as_server touch "$data/standby.signal"
  as_server tee "$data/postgresql.auto.conf" >/dev/null <<CONF
# Written by scripts/failover.sh: node $1 follows node $2.
primary_conninfo = 'host=127.0.0.1 port=$(port_of "$2") user=postgres application_name=node_$1'
CONF
}

base_backup() {  # base_backup NODE FROM
  rm -rf "$(data_of "$1")"
  as_server "$BIN/pg_basebackup" -h 127.0.0.1 -p "$(port_of "$2")" -U postgres -D "$(data_of "$1")" \
    -X stream -c fast >>"$BASE/$1/rebuild.log" 2>&1
  make_standby "$1" "$2"
}

start_node() {
  as_server "$BIN/pg_ctl" -D "$(data_of "$1")" -l "$BASE/$1/server.log" -o "-p $(port_of "$1")" -w -t 60 start \
    >/dev/null || die "node $1 did not start (see above)"
}

# wait_standby STANDBY PRIMARY: the primary streams to it, as synchronous standby unless async.
wait_standby() {
  local want=sync _
  [ "$ASYNC" = 1 ] && want=async
  for _ in $(seq 300); do
    [ "$(sql "$2" postgres "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'node_$1' AND state = 'streaming'" 2>/dev/null)" = "$want" ] && return 0
    sleep 0.2
  done
  die "node $1 is not streaming from node $2 as a $want standby after 60 s"
}

# rebuild OLD NEW: the crashed primary becomes the new primary's standby. pg_rewind first (it
# finishes the crash recovery itself, then winds back what the new timeline does not have); a
# fresh base backup when it fails. Sets REBUILT_BY.
REWINDS=0 BACKUPS=0 REBUILT_BY=""
rebuild() {
  # The promoted node writes its new timeline to pg_control at a checkpoint; pg_rewind reads it there.
  sql "$2" postgres "CHECKPOINT" >/dev/null
  local out rc=0
  out=$(as_server "$BIN/pg_rewind" -D "$(data_of "$1")" \
    --source-server="host=127.0.0.1 port=$(port_of "$2") user=postgres dbname=postgres" 2>&1) || rc=$?
  printf '%s\n' "$out" >>"$BASE/$1/rebuild.log"
  if [ "$rc" -eq 0 ]; then
    REWINDS=$((REWINDS + 1)) REBUILT_BY=pg_rewind
    make_standby "$1" "$2"
  else
    BACKUPS=$((BACKUPS + 1)) REBUILT_BY="pg_basebackup (pg_rewind failed: $(tail -1 <<<"$out"))"
    base_backup "$1" "$2"
  fi
}

# ---- one failover ----------------------------------------------------------------------------
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# crash ROUND PRIMARY STANDBY: pg_ctl -m immediate, in three kinds taking turns.
#   1. under load, nothing else: the commits in flight at that instant are cut off.
#   2. the standby's WAL receiver frozen (SIGSTOP) for half a second first: commits pile up waiting
#      for its confirmation and the crash cuts them all off. The WAL had reached the receiver's
#      socket, so once thawed (before the promotion) it drains it: those commits survive.
#   3. the primary's WAL sender frozen instead: the WAL of the last half second never leaves the
#      primary. With a synchronous standby none of it was acknowledged; with an asynchronous one
#      this is what it loses. The frozen sender is made to exit with the server (a SIGQUIT queued
#      before it is thawed), so it sends nothing more.
CRASH_KIND="" CRASHED_AT="" WAITING=""
crash() {
  local kind=$(( ($1 - 1) % 3 + 1 )) frozen=""
  case $kind in
    2) frozen=$(sql "$3" postgres "SELECT pid FROM pg_stat_wal_receiver")
       CRASH_KIND="crashed node $2 (:$(port_of "$2")) with node $3's WAL receiver frozen" ;;
    3) frozen=$(sql "$2" postgres "SELECT pid FROM pg_stat_replication WHERE application_name = 'node_$3'")
       CRASH_KIND="crashed node $2 (:$(port_of "$2")) with its WAL sender frozen" ;;
    *) CRASH_KIND="crashed node $2 (:$(port_of "$2"))" ;;
  esac
  if [ "$kind" != 1 ]; then
    [ -n "$frozen" ] || die "no WAL $([ "$kind" = 2 ] && echo receiver || echo sender) to freeze"
    FROZEN_PID=$frozen
    kill -STOP "$frozen"
    sleep 0.5
  fi
  # Commits the crash cuts off: those waiting for the standby's confirmation now.
  WAITING=$(sql "$2" postgres "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'" 2>/dev/null || echo "?")
  CRASH_KIND="$CRASH_KIND, $WAITING commits waiting for the standby"
  CRASHED_AT=$(now)
  if [ "$kind" = 3 ]; then
    kill -QUIT "$frozen"  # pending until thawed: then it exits at once
    as_server "$BIN/pg_ctl" -D "$(data_of "$2")" -m immediate -w stop >/dev/null &
    local stopping=$!
    sleep 0.2  # the postmaster has begun its immediate shutdown: the sender's exit is no crash to it
    kill -CONT "$frozen"
    wait "$stopping"
  else
    as_server "$BIN/pg_ctl" -D "$(data_of "$2")" -m immediate -w stop >/dev/null
    [ "$kind" = 1 ] || { kill -CONT "$frozen"; sleep 0.3; }  # the receiver drains its socket
  fi
  FROZEN_PID=""
}

TOTALS=""
failover() {  # failover ROUND PRIMARY STANDBY
  local round=$1 primary=$2 standby=$3 load_log="$BASE/load-$1.log" promoted
  "$WORKLOAD" load --uri "$URI" --journal "$JOURNAL" --round "$round" >"$load_log" 2>&1 &
  LOAD_PID=$!
  sleep "$LOAD_SECONDS"
  kill -0 "$LOAD_PID" 2>/dev/null || { cat "$load_log" >&2; die "the workload stopped before the failover"; }
  crash "$round" "$primary" "$standby"
  DONE=$round
  as_server "$BIN/pg_ctl" -D "$(data_of "$standby")" -w -t 60 promote >/dev/null
  promoted=$(since "$CRASHED_AT")
  rebuild "$primary" "$standby"
  start_node "$primary"
  wait_standby "$primary" "$standby"
  say "$round/$COUNT: $CRASH_KIND, promoted node $standby $promoted s after the crash, node $primary back as its $([ "$ASYNC" = 1 ] && echo a)synchronous standby by $REBUILT_BY $(since "$CRASHED_AT") s after the crash"
  sleep "$AFTER_SECONDS"
  kill -TERM "$LOAD_PID"
  local _
  for _ in $(seq 600); do kill -0 "$LOAD_PID" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$LOAD_PID" 2>/dev/null; then
    cat "$load_log" >&2
    die "the workload did not finish its requests within 120 s of being told to stop"
  fi
  local load_rc=0
  wait "$LOAD_PID" || load_rc=$?
  LOAD_PID=""
  sed 's/^/  /' "$load_log"
  [ "$load_rc" -eq 0 ] || die "the workload saw answers it never provokes (round $round, exit $load_rc)"
  local verify_log="$BASE/verify-$round.log" verify_rc=0 allow=()
  [ "$ASYNC" = 1 ] && allow=(--allow-loss)
  "$WORKLOAD" verify --uri "$URI" --journal "$JOURNAL" --round "$round" "${allow[@]}" >"$verify_log" 2>&1 || verify_rc=$?
  sed 's/^/  /' "$verify_log"
  TOTALS=$(grep '^totals:' "$verify_log" | tail -1 || true)
  [ "$verify_rc" -eq 0 ] || { summary; die "the check after failover $round failed (above)"; }
}

total() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$TOTALS"; }
summary() {
  [ -n "$TOTALS" ] || return 0
  say "$DONE failovers, $(total acknowledged) acknowledged results checked, $(total in_doubt_resolved) in-doubt resolved, $(total double_executions) double executions, $(total lost) lost"
  echo "  in doubt: $(total outcome_unknown) keys with a commit of unknown outcome ($(total in_doubt_survived) of those commits had survived on the new primary and replayed, $(total in_doubt_undone) had not and the retry executed the key once), $(total repeated_steps) with a lease holder that carried on across the failover, $(total fenced) with a lease holder fenced by LeaseLost"
  echo "  $(total unanswered_resolved) keys had a request the failover left without an answer, all settled; $(total replays_checked) replays compared over all checks; old primaries rebuilt by pg_rewind: $REWINDS, by pg_basebackup: $BACKUPS"
  if [ "$ASYNC" = 1 ]; then
    echo "  asynchronous standby: $(total lost) acknowledged results lost: $(total lost_missing) missing on the new primary (the next request with the key runs it again), $(total lost_executed_again) already run a second time by a later request with the key (a second answer, a second execution)"
  fi
}

# ---- the run -----------------------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || [ "$(id -un)" = postgres ] || die "run as root (the servers run as postgres) or as postgres"
if [ "${FAILOVER_INSTALL:-1}" = 1 ]; then build_and_install_extension; else pg_install_server; fi
build_cmake "$BUILD_DIR" failover_workload -DIDEM_BENCH=OFF -DIDEM_TESTS=ON

exec 9>"$BASE.lock"
flock -n 9 || die "another failover run holds $BASE.lock"
# A run killed without its trap leaves its servers behind: they are ours (our directories).
for node in a b; do
  if running "$node"; then as_server "$BIN/pg_ctl" -D "$(data_of "$node")" -m immediate -w stop >/dev/null || true; fi
done
for port in "$PORT_A" "$PORT_B"; do
  port_busy "$port" && die "port $port is taken by another program; choose others (FAILOVER_PORT_A=... FAILOVER_PORT_B=...)"
done
rm -rf "$BASE"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$BASE/a" "$BASE/b" "$RUN_DIR" "$JOURNAL"
if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$BASE/a" "$BASE/b" "$RUN_DIR"; fi

start=$SECONDS
init_primary
start_node a
base_backup b a
start_node b
wait_standby b a
# Nothing is committed before the standby is attached: with a synchronous one, from the first
# transaction on every commit is on both nodes before it is acknowledged.
sql a postgres "CREATE DATABASE $DB" >/dev/null
sql a "$DB" "CREATE EXTENSION pg_idempotency" >/dev/null
"$WORKLOAD" setup --uri "$URI" >/dev/null
mode=synchronous
[ "$ASYNC" = 1 ] && mode=asynchronous
say "primary node a (:$PORT_A), $mode standby node b (:$PORT_B), pg_idempotency $(sql a "$DB" "SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency'"); $COUNT failovers"

DONE=0 primary=a standby=b
for round in $(seq "$COUNT"); do
  failover "$round" "$primary" "$standby"
  read -r primary standby <<<"$standby $primary"
done
summary
echo "  $COUNT failovers in $((SECONDS - start)) s"
