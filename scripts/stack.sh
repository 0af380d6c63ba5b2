#!/usr/bin/env bash
# The demo stack on loopback ports (docs/demo.md): the payment processor, the checkout service and
# the order consumer, each its own process on the throwaway cluster's database $STACK_DB, with
# pid files and logs in .run/. Needs the cluster running (scripts/pg.sh start) and the programs
# built (build/examples/*).
#   scripts/stack.sh check            refuses (exit 1, saying what runs and how to stop it) when
#                                     this stack runs, its ports are taken or its database is used
#                                     by a stack's programs: what setup and up would break
#   scripts/stack.sh setup            fresh database: extension, the service's schema, roles
#   scripts/stack.sh up               start the three (each waits until it answers)
#   scripts/stack.sh down             stop what is running (SIGTERM, then SIGKILL after 5 s)
#   scripts/stack.sh start|stop|kill NAME    one of processor, service, consumer (kill: SIGKILL)
#   scripts/stack.sh status           what runs, on which port
#   scripts/stack.sh token TENANT CALLER     a bearer token the service accepts
#   scripts/stack.sh env              the URLs, as shell assignments
# Ports: SERVICE_PORT (7400), PROCESSOR_PORT (7401), CONSUMER_METRICS_PORT (SERVICE_PORT + 50); STACK_RUN (.run/demo) holds pids and logs, so
# make test's stack (.run/e2e, other ports, its own database) leaves a `make serve` alone.
# SERVICE_ARGS / CONSUMER_ARGS add flags; CONSUMER_ROLE the consumer's login (order_consumer). STACK_CITUS=1: the database is made on every node of
# this checkout's Citus cluster (scripts/citus.sh; PGPORT its coordinator's), the service's tables
# distributed with examples/checkout-service/citus.sql, the service and consumer run with --citus.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUN=${STACK_RUN:-$ROOT/.run/demo}
BIN=${STACK_BIN:-$ROOT/build/examples}
STACK_DB=${STACK_DB:-idem_demo}
SERVICE_PORT=${SERVICE_PORT:-7400}
PROCESSOR_PORT=${PROCESSOR_PORT:-7401}
CONSUMER_METRICS_PORT=${CONSUMER_METRICS_PORT:-$((SERVICE_PORT + 50))}  # the consumer's GET /metrics
PGPORT=${PGPORT:-54320}
mkdir -p "$RUN"

db_url() { echo "postgresql://$1@127.0.0.1:$PGPORT/$STACK_DB"; }
citus_flag() { [ "${STACK_CITUS:-0}" != 1 ] || echo --citus; }
secret() {
  [ -s "$RUN/token_secret" ] || openssl rand -hex 24 >"$RUN/token_secret"
  cat "$RUN/token_secret"
}
# The pid of NAME if it runs. A process that died is no longer "running" even while nobody has
# reaped it (a zombie still answers kill -0: PID 1 in a container may never reap it).
pid_of() {
  local pid state
  [ -s "$RUN/$1.pid" ] || return 1
  pid=$(cat "$RUN/$1.pid")
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ] && echo "$pid"
}

# shellcheck disable=SC2016  # $1 is the inner shell's
port_busy() { timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }

# The name of process PID's program (its executable; comm is cut at 15 characters).
program_of() {
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null) || exe=$(cat "/proc/$1/comm" 2>/dev/null) || exe="?"
  echo "${exe##*/}"
}

# run_dir_of PID: the run dir under .run/ whose pid file names PID; fails when none does.
run_dir_of() {
  local file
  for file in "$ROOT"/.run/*/*.pid; do
    if [ "$(cat "$file" 2>/dev/null)" = "$1" ]; then echo "${file%/*}"; return 0; fi
  done
  return 1
}

# Who listens on PORT, in words: a program of one of this checkout's stacks with the command that
# stops it, or the program's name.
port_holder() {
  local pid dir
  pid=$(ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2 || true)
  [ -n "$pid" ] || { echo "a program this user cannot see"; return; }
  if dir=$(run_dir_of "$pid"); then
    echo "$(program_of "$pid") (pid $pid) of the stack in $dir; STACK_RUN=$dir scripts/stack.sh down stops it"
  else
    echo "$(program_of "$pid") (pid $pid)"
  fi
}

# The run dirs of this checkout's running stacks whose programs use database $STACK_DB (their --db).
stacks_on_db() {
  local file pid
  for file in "$ROOT"/.run/*/*.pid; do
    pid=$(cat "$file" 2>/dev/null) || continue
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "/$STACK_DB "; then echo "${file%/*}"; fi
  done | sort -u
}

# check: what setup and up would break. setup drops and recreates $STACK_DB and the token secret,
# up starts on the two ports: refused while this stack's programs run, while another program
# holds a port, or while a stack's programs (their roles) are connected to the database.
check() {
  local name pid port busy=0 users
  for name in processor service consumer; do
    if pid=$(pid_of "$name"); then
      echo "stack: $name of the stack in $RUN already runs (pid $pid); STACK_RUN=$RUN scripts/stack.sh down stops it" >&2
      busy=1
    fi
  done
  for port in "$PROCESSOR_PORT" "$SERVICE_PORT" "$CONSUMER_METRICS_PORT"; do
    if port_busy "$port"; then
      echo "stack: port $port is taken by $(port_holder "$port")" >&2
      busy=1
    fi
  done
  users=$(psql "postgresql://postgres@127.0.0.1:$PGPORT/postgres" -qAtX -c "SELECT string_agg(DISTINCT usename, ', ')
             FROM pg_stat_activity WHERE datname = '$STACK_DB'
              AND usename IN ('checkout_service', 'order_consumer', 'demo_processor')" 2>/dev/null || true)
  if [ -n "$users" ]; then
    local dir found=0
    echo "stack: database $STACK_DB is in use by a stack's programs (roles $users)" >&2
    while read -r dir; do
      [ -n "$dir" ] || continue
      echo "stack: the stack in $dir uses it; STACK_RUN=$dir scripts/stack.sh down stops it" >&2
      found=1
    done <<<"$(stacks_on_db)"
    [ "$found" = 1 ] || echo "stack: not a stack of this checkout's .run/ (pg_stat_activity shows the sessions)" >&2
    busy=1
  fi
  [ "$busy" = 0 ]
}

setup() {
  local admin="postgresql://postgres@127.0.0.1:$PGPORT"
  if [ "${STACK_CITUS:-0}" = 1 ]; then
    "$ROOT/scripts/citus.sh" drop-database "$STACK_DB"
    "$ROOT/scripts/citus.sh" database "$STACK_DB"
  else
    psql "$admin/postgres" -qAtX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
      -c "DROP DATABASE IF EXISTS $STACK_DB WITH (FORCE)" -c "CREATE DATABASE $STACK_DB" >/dev/null
  fi
  psql "$admin/$STACK_DB" -qAtX -v ON_ERROR_STOP=1 -f "$ROOT/examples/checkout-service/schema.sql" >/dev/null
  if [ "${STACK_CITUS:-0}" = 1 ]; then
    PGOPTIONS="-c client_min_messages=warning" psql "$admin/$STACK_DB" -qAtX -v ON_ERROR_STOP=1 \
      -f "$ROOT/examples/checkout-service/citus.sql" >"$RUN/citus-setup.out"
    if grep -q '|f|' "$RUN/citus-setup.out"; then
      echo "stack: a table of the service is not distributed as it must be:" >&2
      grep '|f|' "$RUN/citus-setup.out" >&2
      return 1
    fi
  fi
  psql "$admin/$STACK_DB" -qAtX -v ON_ERROR_STOP=1 >/dev/null <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'demo_processor') THEN CREATE ROLE demo_processor LOGIN; END IF;
END \$\$;
GRANT CREATE ON DATABASE $STACK_DB TO demo_processor;
SQL
  rm -f "$RUN/token_secret"
}

# start NAME: runs it in the background, then waits (10 s at most) until it answers.
start() {
  local name=$1
  if pid_of "$name" >/dev/null; then echo "$name already running (pid $(pid_of "$name"))"; return 0; fi
  local log="$RUN/$name.log"
  case $name in
    processor)
      "$BIN/payment-processor/payment-processor" --listen "127.0.0.1:$PROCESSOR_PORT" --db "$(db_url demo_processor)" \
        >>"$log" 2>&1 &
      ;;
    service)
      # shellcheck disable=SC2086,SC2046  # SERVICE_ARGS is a list of flags, citus_flag one or none
      "$BIN/checkout-service/checkout-service" --listen "127.0.0.1:$SERVICE_PORT" --db "$(db_url checkout_service)" \
        --processor "http://127.0.0.1:$PROCESSOR_PORT" --token-secret "$(secret)" $(citus_flag) ${SERVICE_ARGS:-} >>"$log" 2>&1 &
      ;;
    consumer)
      # shellcheck disable=SC2086,SC2046
      "$BIN/order-consumer/order-consumer" --db "$(db_url "${CONSUMER_ROLE:-order_consumer}")" \
        --metrics "127.0.0.1:$CONSUMER_METRICS_PORT" $(citus_flag) ${CONSUMER_ARGS:-} >>"$log" 2>&1 &
      ;;
    *) echo "stack: unknown component $name (processor, service, consumer)" >&2; return 2 ;;
  esac
  echo $! >"$RUN/$name.pid"
  local i
  for i in $(seq 1 100); do
    if ! pid_of "$name" >/dev/null; then
      echo "stack: $name exited at start; its log ($log):" >&2
      tail -20 "$log" >&2
      return 1
    fi
    case $name in
      processor) curl -fsS "http://127.0.0.1:$PROCESSOR_PORT/health" >/dev/null 2>&1 && return 0 ;;
      service) curl -fsS "http://127.0.0.1:$SERVICE_PORT/health" >/dev/null 2>&1 && return 0 ;;
      consumer) grep -qs "order-consumer claiming" "$log" && return 0 ;;
    esac
    sleep 0.1
  done
  echo "stack: $name did not answer within 10 s; see $log" >&2
  return 1
}

# stop NAME [SIGNAL]: SIGTERM (or SIGNAL), waits for it to go; SIGKILL after 5 s.
stop() {
  local name=$1 signal=${2:-TERM} pid
  pid=$(pid_of "$name") || { rm -f "$RUN/$name.pid"; return 0; }
  kill -s "$signal" "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 50); do
    pid_of "$name" >/dev/null || break
    sleep 0.1
  done
  pid_of "$name" >/dev/null && kill -KILL "$pid" 2>/dev/null || true
  while pid_of "$name" >/dev/null; do sleep 0.05; done
  rm -f "$RUN/$name.pid"
}

cmd=${1:-status}
shift || true
case $cmd in
  check) check ;;
  setup) setup ;;
  up) start processor && start service && start consumer ;;
  down) stop consumer; stop service; stop processor ;;
  start) start "$1" ;;
  stop) stop "$1" ;;
  kill) stop "$1" KILL ;;
  status)
    for n in processor service consumer; do
      if p=$(pid_of "$n"); then echo "$n: running (pid $p)"; else echo "$n: stopped"; fi
    done
    ;;
  token) "$BIN/checkout-service/checkout-service" --mint-token "$1" "$2" --token-secret "$(secret)" ;;
  env)
    echo "SERVICE_URL=http://127.0.0.1:$SERVICE_PORT"
    echo "PROCESSOR_URL=http://127.0.0.1:$PROCESSOR_PORT"
    echo "CONSUMER_METRICS_URL=http://127.0.0.1:$CONSUMER_METRICS_PORT/metrics"
    echo "STACK_DB_URL=$(db_url postgres)"
    ;;
  *) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
