#!/usr/bin/env bash
# scripts/pg.sh refuses a port that another cluster (or program) holds, naming that cluster's data
# directory and how to choose PGPORT; the start/stop helper of test.sh, demo.sh and bench.sh
# (pg_up/pg_down in scripts/lib.sh) stops only a server it started, also on failure and signals.
#
# Runs on its own, beside (and without touching) the checkout's cluster: a copy of pg.sh and lib.sh
# in a temporary fake checkout (its .pg and its private server copy build/pg-install are links to
# /var/tmp when run as root, as in a 0700 home), a second throwaway cluster in a temporary
# directory, ports from 54410-54419 that nothing uses. Both servers run from private copies of the
# system's server (scripts/pg-install.sh): the other cluster from this checkout's, the fake
# checkout's from its own. Everything it starts or makes is stopped and removed on any exit.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$REPO
# shellcheck source=scripts/pg-install.sh
source "$REPO/scripts/pg-install.sh"
pg_install_server || exit 1
BIN=$PG_BINDIR
unset IDEM_PG_INSTALL  # the fake checkout makes its own copy

as_server() {
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}
# shellcheck disable=SC2016  # $1 is the inner shell's
listening() { timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }

WORK=$(mktemp -d /tmp/pg_port_conflict.XXXXXX)
chmod 755 "$WORK"                  # the other cluster's server (postgres) must enter it
OTHER="$WORK/other"                # the other cluster: $OTHER/data
FAKE="$WORK/checkout"              # a checkout with this checkout's pg.sh, lib.sh, cluster.sh
LISTENER_PID="" WAITER_PID=""

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -z "$WAITER_PID" ] || kill "$WAITER_PID" 2>/dev/null
  [ ! -s "$WORK/ran.sleep" ] || kill "$(cat "$WORK/ran.sleep")" 2>/dev/null
  [ -z "$LISTENER_PID" ] || kill "$LISTENER_PID" 2>/dev/null
  if [ -x "$FAKE/scripts/pg.sh" ]; then
    "$FAKE/scripts/pg.sh" destroy >/dev/null 2>&1 || echo "cleanup: could not destroy the fake checkout's cluster" >&2
  fi
  if [ -f "$OTHER/data/postmaster.pid" ]; then
    as_server "$BIN/pg_ctl" -D "$OTHER/data" -m immediate -w stop >/dev/null 2>&1 ||
      echo "cleanup: could not stop the other cluster in $OTHER/data" >&2
  fi
  case "${FAKE_BASE:-}" in /var/tmp/pg_idempotency-*) rm -rf "$FAKE_BASE" ;; esac  # if destroy failed
  local fake_install
  fake_install=$(readlink -f "$FAKE/build/pg-install" 2>/dev/null)
  case "$fake_install" in /var/tmp/pg_idempotency-install-*) rm -rf "$fake_install" ;; esac
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

checks=0 fails=0
ok() { checks=$((checks + 1)); echo "holds: $1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAILED: $1" >&2; }
# expect_rc WHAT WANT GOT [OUTPUT]
expect_rc() {
  if [ "$3" = "$2" ]; then ok "$1 (exit $3)"; else fail "$1: exit $3, expected $2${4:+; output:
$4}"; fi
}
# expect_in WHAT NEEDLE HAYSTACK
expect_in() {
  if [[ "$3" == *"$2"* ]]; then ok "$1"; else fail "$1: '$2' not in:
$3"; fi
}
expect_true() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
expect_false() { local what=$1; shift; if "$@"; then fail "$what"; else ok "$what"; fi; }
# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds, a check that fails after SECONDS (a
# slow machine is not a failure; a condition that never comes is).
wait_for() {
  local what=$1 limit=$2 start=$SECONDS
  shift 2
  until "$@"; do
    [ $((SECONDS - start)) -lt "$limit" ] || { fail "$what (not after $limit s)"; return 1; }
    sleep 0.1
  done
  ok "$what"
}

# Three free ports: the other cluster's, the fake checkout's, and a spare (our cluster elsewhere,
# then a program that is not PostgreSQL).
ports=()
for p in $(seq 54410 54419); do
  listening "$p" || ports+=("$p")
done
if [ "${#ports[@]}" -lt 3 ]; then
  echo "need 3 free ports in 54410-54419, found ${#ports[@]}: ${ports[*]:-none}" >&2
  exit 1
fi
OTHER_PORT=${ports[0]} OUR_PORT=${ports[1]} SPARE_PORT=${ports[2]}
echo "ports: other cluster $OTHER_PORT, fake checkout $OUR_PORT, spare $SPARE_PORT; work dir $WORK"

# ---- the fake checkout and the wrapper that uses test.sh's helper --------------------------------
mkdir -p "$FAKE/scripts"
cp "$REPO/scripts/pg.sh" "$REPO/scripts/lib.sh" "$REPO/scripts/cluster.sh" "$REPO/scripts/pg-install.sh" "$FAKE/scripts/"
# Like a clone in a 0700 home directory: as root, pg.sh then links .pg and build/pg-install to
# /var/tmp directories.
chmod 700 "$FAKE"
# wrapper.sh MODE MARKER: pg_up as test.sh/demo.sh do; writes MARKER only if it got a server
# that is ours; then MODE: ok (exit 0), fail (exit 7), int (SIGINT to itself), wait (sleep
# until killed). set -e like demo.sh and bench.sh.
cat >"$FAKE/scripts/wrapper.sh" <<'WRAPPER'
#!/usr/bin/env bash
set -euo pipefail
source "$(dirname "$0")/lib.sh"
pg_up >/dev/null || exit 1
"$ROOT/scripts/pg.sh" owned >/dev/null
echo ran >"$2"
case "$1" in
  ok) ;;
  fail) exit 7 ;;
  int) kill -INT $$; sleep 5 ;;
  wait) sleep 60 & echo $! >"$2.sleep"; wait $! ;;
esac
WRAPPER
chmod +x "$FAKE/scripts/wrapper.sh"
PGSH="$FAKE/scripts/pg.sh"
WRAP="$FAKE/scripts/wrapper.sh"
# A shell started with SIGINT ignored (a background CI job) cannot trap it: give the wrapper the
# default disposition, as a terminal's Ctrl-C would find it.
if env --default-signal=INT true 2>/dev/null; then
  run_wrapper() { env --default-signal=INT "$WRAP" "$@"; }
else
  run_wrapper() { "$WRAP" "$@"; }
fi
MARK="$WORK/ran"

# ---- another cluster on OTHER_PORT ---------------------------------------------------------------
mkdir -p "$OTHER/run"
[ "$(id -u)" -ne 0 ] || chown -R postgres:postgres "$OTHER"
as_server "$BIN/initdb" -D "$OTHER/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$WORK/initdb.log" 2>&1 ||
  { cat "$WORK/initdb.log" >&2; exit 1; }
as_server "$BIN/pg_ctl" -D "$OTHER/data" -l "$OTHER/server.log" -w -t 60 \
  -o "-p $OTHER_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$OTHER/run -c shared_buffers=16MB -c fsync=off" \
  start >/dev/null || { tail "$OTHER/server.log" >&2; exit 1; }
other_running() { as_server "$BIN/pg_ctl" -D "$OTHER/data" status >/dev/null 2>&1; }

echo "== port $OTHER_PORT held by another cluster ($OTHER/data)"
out=$(PGPORT=$OTHER_PORT "$PGSH" start 2>&1); rc=$?
sed 's/^/   | /' <<<"$out"
expect_rc "pg.sh start on the other cluster's port fails" 1 "$rc" "$out"
expect_in "the message names the other data directory" "data directory $OTHER/data" "$out"
expect_in "the message says how to choose the port" "PGPORT=" "$out"
expect_in "the message names the port" "port $OTHER_PORT" "$out"
expect_false "pg.sh start made no cluster for the fake checkout" test -e "$FAKE/.pg/data/PG_VERSION"
expect_true "the other cluster still runs" other_running

out=$(PGPORT=$OTHER_PORT "$PGSH" owned 2>&1); rc=$?
expect_rc "pg.sh owned on the other cluster's port" 1 "$rc" "$out"
expect_in "pg.sh owned names the other data directory" "$OTHER/data" "$out"

rm -f "$MARK"
out=$(PGPORT=$OTHER_PORT run_wrapper ok "$MARK" 2>&1); rc=$?
expect_rc "the helper refuses the other cluster's port" 1 "$rc" "$out"
expect_false "nothing ran against the other cluster" test -e "$MARK"
expect_true "the other cluster still runs after the helper" other_running

# ---- stop discipline: no server before ---------------------------------------------------------
echo "== port $OUR_PORT free: the helper stops what it started"
for mode in ok fail int; do
  case $mode in ok) want=0 ;; fail) want=7 ;; int) want=130 ;; esac
  rm -f "$MARK"
  out=$(PGPORT=$OUR_PORT run_wrapper "$mode" "$MARK" 2>&1); rc=$?
  expect_rc "wrapper ($mode) with no server before" "$want" "$rc" "$out"
  expect_true "wrapper ($mode) got our server" test -e "$MARK"
  expect_false "nothing listens on $OUR_PORT after the wrapper ($mode)" listening "$OUR_PORT"
  out=$(PGPORT=$OUR_PORT "$PGSH" status 2>&1); rc=$?
  expect_rc "pg.sh status after the wrapper ($mode): stopped" 3 "$rc" "$out"
done
FAKE_BASE=$(readlink -f "$FAKE/.pg")
FAKE_INSTALL=$(readlink -f "$FAKE/build/pg-install")
if [ "$(id -u)" -eq 0 ]; then
  expect_in "as root, .pg of a 0700 checkout is a link to /var/tmp" "/var/tmp/pg_idempotency-" "$FAKE_BASE"
  expect_in "as root, build/pg-install of a 0700 checkout is a link to /var/tmp" "/var/tmp/pg_idempotency-install-" "$FAKE_INSTALL"
fi

rm -f "$MARK"
PGPORT=$OUR_PORT "$WRAP" wait "$MARK" >"$WORK/wait.out" 2>&1 &
WAITER_PID=$!
wait_for "the waiting wrapper got our server" 120 test -e "$MARK.sleep"
kill -TERM "$WAITER_PID"
wait "$WAITER_PID"; rc=$?
WAITER_PID=""
kill "$(cat "$MARK.sleep")" 2>/dev/null
expect_rc "wrapper killed with SIGTERM" 143 "$rc" "$(cat "$WORK/wait.out")"
expect_false "nothing listens on $OUR_PORT after SIGTERM" listening "$OUR_PORT"

# ---- stop discipline: our server already running -----------------------------------------------
echo "== our cluster already running on $OUR_PORT: the helper leaves it running"
out=$(PGPORT=$OUR_PORT "$PGSH" start 2>&1); rc=$?
expect_rc "pg.sh start (fake checkout)" 0 "$rc" "$out"
out=$(PGPORT=$OUR_PORT "$PGSH" start 2>&1); rc=$?
expect_rc "pg.sh start again: a no-op" 0 "$rc" "$out"
out=$(PGPORT=$OUR_PORT "$PGSH" owned 2>&1); rc=$?
expect_rc "pg.sh owned on our port (through the .pg link)" 0 "$rc" "$out"
# sharedir PORT: where the server on PORT finds its share/ (computed from its own binary's path).
sharedir() {
  "$BIN/psql" -qAtX "host=127.0.0.1 port=$1 user=postgres dbname=postgres" -c "SELECT setting FROM pg_config WHERE name = 'SHAREDIR'"
}
expect_in "the fake checkout's server runs from its own private copy" "$FAKE_INSTALL$SYSTEM_PG_SHAREDIR" "$(sharedir "$OUR_PORT")"
expect_in "the other cluster runs from this checkout's private copy" "$(readlink -f "$PG_SHAREDIR")" "$(sharedir "$OTHER_PORT")"
for mode in ok fail; do
  case $mode in ok) want=0 ;; fail) want=7 ;; esac
  rm -f "$MARK"
  out=$(PGPORT=$OUR_PORT run_wrapper "$mode" "$MARK" 2>&1); rc=$?
  expect_rc "wrapper ($mode) with our server running before" "$want" "$rc" "$out"
  out=$(PGPORT=$OUR_PORT "$PGSH" owned 2>&1); rc=$?
  expect_rc "our server still runs and owns $OUR_PORT after the wrapper ($mode)" 0 "$rc" "$out"
done

# Our cluster runs on OUR_PORT; asked for SPARE_PORT, pg.sh says so instead of a second start.
out=$(PGPORT=$SPARE_PORT "$PGSH" start 2>&1); rc=$?
expect_rc "pg.sh start on another port while ours runs on $OUR_PORT" 1 "$rc" "$out"
expect_in "the message names the port it runs on" "on port $OUR_PORT" "$out"
out=$(PGPORT=$SPARE_PORT "$PGSH" owned 2>&1); rc=$?
expect_rc "pg.sh owned on a port where nothing listens" 1 "$rc" "$out"
out=$(PGPORT=$OUR_PORT "$PGSH" stop 2>&1); rc=$?
expect_rc "pg.sh stop" 0 "$rc" "$out"
expect_false "nothing listens on $OUR_PORT after pg.sh stop" listening "$OUR_PORT"

# ---- a program that is not PostgreSQL -----------------------------------------------------------
# The interpreter itself (not a pyenv-style shim that forks it), so that $! is the listener's pid.
PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -n "$PYTHON" ]; then
  echo "== port $SPARE_PORT held by a program that is not PostgreSQL"
  # The listener says when it listens (a ready file after listen()): on a loaded machine the
  # interpreter's start took longer than a fixed wait, and pg.sh then met a free port.
  rm -f "$WORK/listener.ready"
  "$PYTHON" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept(); c.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n"); c.close()
' "$SPARE_PORT" "$WORK/listener.ready" &
  LISTENER_PID=$!
  wait_for "the fake listener listens on $SPARE_PORT" 120 test -e "$WORK/listener.ready"
  expect_true "the fake listener answers on $SPARE_PORT" listening "$SPARE_PORT"
  out=$(PGPORT=$SPARE_PORT "$PGSH" start 2>&1); rc=$?
  sed 's/^/   | /' <<<"$out"
  expect_rc "pg.sh start on a port held by another program" 1 "$rc" "$out"
  expect_in "the message says it is not PostgreSQL" "not a PostgreSQL server" "$out"
  expect_in "the message says how to choose the port" "PGPORT=" "$out"
  kill "$LISTENER_PID" 2>/dev/null; wait "$LISTENER_PID" 2>/dev/null; LISTENER_PID=""
else
  echo "(no python3: skipping the non-PostgreSQL listener case)"
fi

echo
echo "pg_port_conflict_test: $((checks - fails)) of $checks checks passed"
[ "$fails" -eq 0 ]
