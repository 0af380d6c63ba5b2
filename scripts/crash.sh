#!/usr/bin/env bash
# The crash loop (docs/reliability.md, "Crashes"): nothing acknowledged is lost, nothing executes
# twice, while the server is killed. On a throwaway cluster of its own (never the project's
# .pg/), CRASH_RESTARTS times: run the workload (tests/crash/) for a random 0.5-3 s with a holder
# that dies holding a lease, kill -9 the postmaster and every backend at once like a machine
# crash, restart it (crash recovery), let the workload resolve what was in doubt and check
# everything it was acknowledged. Then amcheck on every btree index of schema idem and
# crash_orders. Exits non-zero on any violation. The cluster is stopped and its data directory
# deleted on every exit (also on failure or Ctrl-C); on failure the logs are kept.
#   CRASH_RESTARTS (100 for make crash), CRASH_PGPORT (54340), CRASH_BUILD_DIR (build),
#   CRASH_KEEP_LOGS (set: keep the logs after a clean run too), CRASH_THREADS (8), CRASH_POOL
#   (keys in the workload's sliding pool, 64), CRASH_SEED (random; printed: it replays the kill
#   times, not the threads' interleaving), CRASH_INSTALL (1: build the extension and install it
#   into the private server copy the cluster runs from, build/pg-install/; 0: use it as it is)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

RESTARTS=${CRASH_RESTARTS:-100}
PORT=${CRASH_PGPORT:-54340}
BUILD_DIR=${CRASH_BUILD_DIR:-build}
BUILD_DIR=${BUILD_DIR#"$ROOT"/}  # build_cmake takes a folder of the checkout
WORKLOAD="$ROOT/$BUILD_DIR/tests/crash/crash-workload"

# Killed backends are re-parented to the nearest subreaper: make this script one (the workload
# binary execs it so), so it reaps them; a container's PID 1 may never do it, and every crash
# would leave a dozen zombies (which also still answer kill -0). CRASH_SUBREAPER: set by this
# script for its second start.
if [ -z "${CRASH_SUBREAPER:-}" ]; then
  if [ "${CRASH_INSTALL:-1}" = 1 ]; then
    echo "crash: building the extension into the private server copy (${PG_INSTALL#"$ROOT"/})"
    build_and_install_extension || { echo "crash: FAILED: the extension did not build or install" >&2; exit 1; }
  fi
  echo "crash: building crash-workload in $BUILD_DIR/"
  build_cmake "$BUILD_DIR" crash_workload -DIDEM_BENCH=OFF -DIDEM_TESTS=ON || {
    echo "crash: FAILED: the build failed (cmake --build $BUILD_DIR --target crash_workload shows why)" >&2
    exit 1
  }
  export CRASH_SUBREAPER=1
  exec "$WORKLOAD" --subreaper "$BASH" "$0" "$@"
fi

SEED=${CRASH_SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$SEED
# Outside the checkout, where user postgres can always enter; one directory per checkout and port.
BASE=/var/tmp/pg_idempotency-crash-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)-$PORT
DATA=$BASE/data
SOCKETS=$BASE/run
SERVER_LOG=$BASE/server.log
LEDGER=$BASE/ledger.jsonl
WORKLOAD_LOG=$BASE/workload.log
DB=crash
URL="postgresql://postgres@127.0.0.1:$PORT/$DB?connect_timeout=5"

# shellcheck source=scripts/cluster.sh
source "$ROOT/scripts/cluster.sh"  # as_server, init_durable_cluster, PG_BINDIR
BIN=$PG_BINDIR  # this checkout's private server copy, with the extension (see the build step)
psql_crash() { "$BIN/psql" -qAtX -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$PORT/${2:-$DB}" -c "$1"; }
# shellcheck disable=SC2016  # $1 is the inner shell's
port_busy() { timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$PORT" 2>/dev/null; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
seconds_of() { printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )); }
fail() { echo "crash: FAILED: $*" >&2; exit 1; }

# ---- the cluster ------------------------------------------------------------------------------
# pg.sh's initdb flags and settings (durable: acquire refuses a store without fsync or
# synchronous_commit), on our own port and directory; checkpoints every 30 s so the kills also
# land during checkpoints and recovery starts from different redo points.
init_cluster() {
  mkdir -p "$BASE" "$SOCKETS"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$BASE" "$SOCKETS"; fi
  init_durable_cluster "$BIN" "$DATA" "$SOCKETS" "$BASE/initdb.log"
  echo "checkpoint_timeout = 30s" | as_server tee -a "$DATA/postgresql.conf" >/dev/null
}

start_server() {
  # After a kill pg_ctl warns that "another server might be running" (the stale postmaster.pid):
  # expected here, so its output goes to a file.
  if ! as_server "$BIN/pg_ctl" -D "$DATA" -l "$SERVER_LOG" -o "-p $PORT" -w -t 120 start >>"$BASE/pg_ctl.log" 2>&1; then
    tail -5 "$BASE/pg_ctl.log" >&2
    tail -20 "$SERVER_LOG" >&2
    fail "the server did not start"
  fi
  # Nothing runs against a server that is not this cluster.
  [ "$(psql_crash 'SHOW data_directory' postgres)" = "$DATA" ] || fail "the server on port $PORT is not $DATA"
}

postmaster_pid() { head -1 "$DATA/postmaster.pid" 2>/dev/null || true; }

alive() {  # alive PID: running, not a zombie
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# Like a machine crash: freeze the postmaster (so it forks nothing and notices nothing) and all
# its children (backends, checkpointer, walwriter, ...), so none moves on while the others die,
# then SIGKILL them all. Only processes of this cluster: the postmaster of our postmaster.pid,
# whose cwd is our data directory, and its children.
crash_server() {
  local pm kids pid
  pm=$(postmaster_pid)
  { [ -n "$pm" ] && alive "$pm"; } || fail "no postmaster to kill (postmaster.pid: '${pm:-}')"
  [ "$(readlink "/proc/$pm/cwd")" = "$DATA" ] || fail "pid $pm is not the postmaster of $DATA"
  kill -STOP "$pm"
  kids=$(pgrep -P "$pm" || true)
  # shellcheck disable=SC2086  # lists of pids
  kill -STOP $kids 2>/dev/null || true
  # shellcheck disable=SC2086
  kill -KILL $kids "$pm" 2>/dev/null || true
  for pid in $kids $pm; do
    for _ in $(seq 200); do alive "$pid" || break; sleep 0.05; done
    alive "$pid" && fail "pid $pid survived SIGKILL"
  done
  return 0
}

stop_server() {
  [ -f "$DATA/postmaster.pid" ] || return 0
  local pm
  pm=$(postmaster_pid)
  if [ -n "$pm" ] && alive "$pm"; then
    as_server "$BIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null 2>&1 || crash_server
  fi
}

# ---- the workload (a coprocess: commands in, one answer line each out) -------------------------
WORKLOAD_PID=""
ask() {  # ask COMMAND TIMEOUT: sends it, sets REPLY to the answer line
  echo "$1" >&"${WL[1]}" || fail "the workload is gone (see $WORKLOAD_LOG)"
  IFS= read -r -t "$2" -u "${WL[0]}" REPLY || fail "no answer from the workload to '$1' within $2 s (see $WORKLOAD_LOG)"
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$WORKLOAD_PID" ] && kill -0 "$WORKLOAD_PID" 2>/dev/null; then
    kill "$WORKLOAD_PID" 2>/dev/null || true
    wait "$WORKLOAD_PID" 2>/dev/null || true
  fi
  stop_server || true
  rm -rf "$DATA" "$SOCKETS"
  if [ "$rc" -eq 0 ] && [ -z "${CRASH_KEEP_LOGS:-}" ]; then
    rm -rf "$BASE"
  elif [ -d "$BASE" ]; then
    echo "crash: logs kept in $BASE (server.log, workload.log, ledger.jsonl); seed $SEED" >&2
  fi
  exit "$rc"
}

# ---- the run ---------------------------------------------------------------------------------
if [ -f "$DATA/postmaster.pid" ] && alive "$(postmaster_pid)"; then
  fail "$DATA is in use by a running server (pid $(postmaster_pid)): another crash run of this checkout on port" \
    "$PORT, or the cluster of one that was killed (stop it: runuser -u postgres -- $BIN/pg_ctl -D $DATA stop)"
fi
port_busy && fail "port $PORT is taken by another server or program; choose another with CRASH_PGPORT"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rm -rf "$BASE"
init_cluster
start_server
psql_crash "CREATE DATABASE $DB" postgres >/dev/null
psql_crash "CREATE EXTENSION pg_idempotency" >/dev/null
"$WORKLOAD" --url "$URL" --setup
echo "crash: cluster $DATA on port $PORT, $RESTARTS restarts, seed $SEED"

coproc WL { exec "$WORKLOAD" --url "$URL" --log "$LEDGER" --threads "${CRASH_THREADS:-8}" \
  --pool "${CRASH_POOL:-64}" --seed "$SEED" 2>>"$WORKLOAD_LOG"; }
WORKLOAD_PID=$WL_PID
IFS= read -r -t 30 -u "${WL[0]}" REPLY || fail "the workload did not start (see $WORKLOAD_LOG)"
RUN_ID=$(field run_id "$REPLY")
started=$(now_ms)

for i in $(seq "$RESTARTS"); do
  window=$(( 500 + RANDOM % 2501 ))                   # ms of load before the kill
  hold_at=$(( window / 10 + RANDOM % (window * 4 / 10) ))
  ask "go $i" 10
  sleep "$(seconds_of "$hold_at")"
  holder=$(printf 'hold-%s-%03d-died' "$RUN_ID" "$i")
  "$WORKLOAD" --url "$URL" --hold-and-die "$holder" --lease-ms 1000 >/dev/null 2>>"$WORKLOAD_LOG" ||
    fail "the holder of $holder did not get to its checkpoint (see $WORKLOAD_LOG)"
  ask "held $holder" 30
  left=$(( window - hold_at - 100 ))
  [ "$left" -gt 0 ] && sleep "$(seconds_of "$left")"
  crash_server
  log_before=$(stat -c %s "$SERVER_LOG")
  down=$(now_ms)
  start_server
  up=$(now_ms)
  # The restart must have been a crash recovery, not a clean start. (grep without -q: an early
  # exit would fail the pipeline through tail's SIGPIPE.)
  tail -c +"$((log_before + 1))" "$SERVER_LOG" | grep "not properly shut down; automatic recovery" >/dev/null ||
    fail "restart $i: no crash recovery in $SERVER_LOG"
  ask settle 600
  [ "${REPLY%% *}" = settled ] || fail "restart $i: the workload answered: $REPLY"
  echo "crash: restart $i/$RESTARTS: killed after $(seconds_of "$window") s," \
    "recovered in $(seconds_of $((up - down))) s;" \
    "$(field acknowledged "$REPLY") acknowledged ($(field keys "$REPLY") keys)," \
    "$(field unresolved_resolved "$REPLY") unresolved resolved ($(field in_doubt_resolved "$REPLY") in doubt," \
    "$(field in_doubt_committed "$REPLY") of them committed), $(field holders_resumed "$REPLY") holders resumed," \
    "$(field double_executions "$REPLY") double executions; checked in $(field seconds "$REPLY") s"
  [ "$(field violations "$REPLY")" = 0 ] ||
    fail "restart $i: $(field violations "$REPLY") violations (see $WORKLOAD_LOG)"
done

ask final 900
[ "${REPLY%% *}" = final ] || fail "the final check answered: $REPLY"
wait "$WORKLOAD_PID" || fail "the workload found violations (see $WORKLOAD_LOG)"
WORKLOAD_PID=""
[ "$(field violations "$REPLY")" = 0 ] || fail "$(field violations "$REPLY") violations (see $WORKLOAD_LOG)"
FINAL=$REPLY

# ---- amcheck: every btree index of schema idem and of crash_orders, their heaps too ------------
psql_crash "CREATE EXTENSION IF NOT EXISTS amcheck" >/dev/null
TABLES="SELECT t.oid FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace WHERE t.relkind = 'r'
  AND (n.nspname = 'idem' OR (n.nspname = 'public' AND t.relname = 'crash_orders'))"
INDEXES="SELECT c.oid, c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am am ON am.oid = c.relam WHERE am.amname = 'btree' AND c.relkind = 'i' AND i.indisvalid
  AND i.indrelid IN ($TABLES)"
# bt_index_check raises an error at the first corruption it finds: psql then fails.
checked=$(psql_crash "SELECT x.relname, bt_index_check(x.oid, heapallindexed => true) FROM ($INDEXES) x" | wc -l) ||
  fail "amcheck: bt_index_check found corruption (above)"
heap_problems=$(psql_crash "SELECT count(*) FROM ($TABLES) t, LATERAL verify_heapam(t.oid) v") ||
  fail "amcheck: verify_heapam failed"
tables=$(psql_crash "SELECT count(*) FROM ($TABLES) t")
[ "$heap_problems" = 0 ] || fail "amcheck: verify_heapam reports $heap_problems corrupt tuples"
[ "$checked" -gt 0 ] || fail "amcheck: no index found to check"

final_of() { field "$1" "$FINAL"; }
landed=$(final_of in_doubt_committed)
echo "crash: $(final_of keys) keys, $(final_of requests) requests: $(final_of executions) executions," \
  "$(final_of replays) replays, $(final_of in_progress) answered 409, $(final_of mismatches_refused) changed bodies" \
  "refused 422; failures: $(final_of outcome_unknown) outcome unknown, $(final_of connection_lost) connection lost," \
  "$(final_of pool_timeout) pool timeouts, $(final_of lease_lost) lease lost, $(final_of database_error) database" \
  "errors, $(final_of other) other; in doubt: $landed COMMITs had landed (replayed)," \
  "$(( $(final_of in_doubt_resolved) - landed )) had not (ran once); $(final_of lease_resumes) leases left by a" \
  "kill resumed at \"charged\"; $(final_of replays_verified) replays verified byte for byte;" \
  "$(final_of rows_checked) business-row checks; $(seconds_of $(( $(now_ms) - started ))) s"
echo "crash: $RESTARTS restarts, $(final_of acknowledged) acknowledged results checked," \
  "$(final_of in_doubt_resolved) in-doubt resolved ($(final_of unresolved_resolved) unresolved in all)," \
  "$(final_of holders_resumed) holder deaths resumed, $(final_of double_executions) double executions," \
  "amcheck clean on $checked indexes and $tables tables"
