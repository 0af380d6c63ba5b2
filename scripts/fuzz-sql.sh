#!/usr/bin/env bash
# `make fuzz-sql`: the SQL-surface fuzzer (tests/fuzz_sql/) for FUZZ_SQL_SECONDS (600 for make
# fuzz-sql, 30 when unset) on its own throwaway cluster: every function of schema idem, called from
# FUZZ_SQL_SESSIONS (4) sessions as each of the extension's roles and as the superuser, with
# hostile arguments. Fails on a server crash, an XX000, an SQLSTATE that is neither ours nor on
# the allow-list (tests/fuzz_sql/verdict.cpp), or a refused call that changed the store.
#   FUZZ_SQL_PGPORT (54360)  the cluster's port, 127.0.0.1 only; a port in use is refused
#   FUZZ_SQL_SEED            replays a run's choices (printed at the start; timing still varies)
#   FUZZ_SQL_BIN             a fuzz_sql already built (make test's); otherwise built in build/
#   FUZZ_SQL_NO_INSTALL=1    use the extension in the private server copy (build/pg-install/) as
#                            it is (make test installed it)
#   FUZZ_SQL_TRACE=FILE      every statement, clipped, with its outcome
#   FUZZ_SQL_BRIEF=1         the per-function SQLSTATE table is left out of the output (make
#                            test's smoke run: its log stays readable); the whole report is
#                            always kept in build/fuzz-sql-report.txt
# The cluster lives in /var/tmp/pg_idempotency-fuzzsql/<port>/ and is stopped and deleted on exit
# (also on failure or Ctrl-C). Findings are kept in build/fuzz-sql-findings/, one .sql per
# statement, to replay with psql against any database with the extension.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

SECONDS_TO_RUN=${FUZZ_SQL_SECONDS:-30}
PORT=${FUZZ_SQL_PGPORT:-54360}
SESSIONS=${FUZZ_SQL_SESSIONS:-4}
BASE=/var/tmp/pg_idempotency-fuzzsql/$PORT
DATA=$BASE/data
LOG=$BASE/server.log
FINDINGS=$ROOT/build/fuzz-sql-findings
DB=idem_fuzz

# shellcheck source=scripts/cluster.sh
source "$ROOT/scripts/cluster.sh"  # as_server, init_durable_cluster, PG_BINDIR
PGBIN=$PG_BINDIR  # this checkout's private server copy (pg_install_server below)
# shellcheck disable=SC2016  # $1 is the inner shell's
port_busy() { timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }

if [ -n "${FUZZ_SQL_BIN:-}" ]; then
  FUZZER=$FUZZ_SQL_BIN
else
  echo "fuzz-sql: building tests/fuzz_sql (build/)"
  build_cmake build fuzz_sql -DIDEM_BENCH=OFF
  FUZZER=$ROOT/build/tests/fuzz_sql/fuzz_sql
fi
if [ "${FUZZ_SQL_NO_INSTALL:-0}" != 1 ]; then build_and_install_extension; else pg_install_server; fi

if port_busy "$PORT"; then
  echo "fuzz-sql: port $PORT is in use; it is left alone. Choose another: FUZZ_SQL_PGPORT=$((PORT + 1)) make fuzz-sql" >&2
  exit 1
fi

STARTED=0
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$STARTED" = 1 ]; then as_server "$PGBIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$BASE"
  rmdir "${BASE%/*}" 2>/dev/null || true  # another port's cluster may still live beside it
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rm -rf "$BASE" && mkdir -p "$BASE/run"
if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$BASE"; fi
init_durable_cluster "$PGBIN" "$DATA" "$BASE/run" "$BASE/initdb.log"
# Errors are not logged (millions of them, some with 1 MB statements); a crashed backend still
# is, at LOG level, with the statement it ran.
as_server tee -a "$DATA/postgresql.conf" >/dev/null <<CONF
port = $PORT
max_connections = 50
shared_buffers = 128MB
log_min_messages = log
log_min_error_statement = panic
log_checkpoints = off
CONF
STARTED=1
as_server "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >/dev/null

URL="postgresql://postgres@127.0.0.1:$PORT"
psql "$URL/postgres" -qAtX -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DB" >/dev/null
# One login role in each group the extension creates, and a few topics and consumers for the
# outbox functions to find (the fuzz registers more of its own).
psql "$URL/$DB" -qAtX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE EXTENSION pg_idempotency;
CREATE ROLE fuzz_service LOGIN IN ROLE idem_service;
CREATE ROLE fuzz_consumer LOGIN IN ROLE idem_consumer;
CREATE ROLE fuzz_operator LOGIN IN ROLE idem_operator;
CREATE ROLE fuzz_auditor LOGIN IN ROLE idem_auditor;
SELECT idem.create_topic('orders.created'), idem.create_topic('payments.captured');
SELECT idem.create_consumer('c1', '{orders.created,payments.captured}'), idem.create_consumer('c2', '{orders.created}');
SQL
echo "fuzz-sql: cluster on 127.0.0.1:$PORT ($DATA), pg_idempotency $(psql "$URL/$DB" -qAtX -c \
  "SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency'")"

rm -rf "$FINDINGS" && mkdir -p "$FINDINGS"
rc=0
REPORT=$ROOT/build/fuzz-sql-report.txt
mkdir -p "${REPORT%/*}"
# The progress lines as they come; with FUZZ_SQL_BRIEF=1 without the table, whose rows are the
# lines indented by two spaces (all of it stays in $REPORT).
brief='^  |SQLSTATEs per function'
[ "${FUZZ_SQL_BRIEF:-0}" = 1 ] || brief='^$'
set +e
"$FUZZER" --port="$PORT" --dbname="$DB" --sessions="$SESSIONS" --seconds="$SECONDS_TO_RUN" \
  --findings-dir="$FINDINGS" --server-log="$LOG" ${FUZZ_SQL_SEED:+--seed="$FUZZ_SQL_SEED"} \
  ${FUZZ_SQL_TRACE:+--trace="$FUZZ_SQL_TRACE"} 2>&1 | tee "$REPORT" | grep --line-buffered -Ev "$brief"
rc=${PIPESTATUS[0]}
set -e
[ "${FUZZ_SQL_BRIEF:-0}" != 1 ] || echo "fuzz-sql: the per-function SQLSTATE table is in $REPORT"
# The fuzzer reads the log too; this is the check that does not depend on it.
if grep -Eq 'terminated by signal|was terminated by exception|PANIC:' "$LOG"; then
  echo "fuzz-sql: the server log reports a crashed backend:" >&2
  grep -E -A2 'terminated by signal|was terminated by exception|PANIC:' "$LOG" | head -40 >&2
  [ "$rc" -ne 0 ] || rc=1
fi
if [ "$rc" -ne 0 ] && [ -n "$(ls -A "$FINDINGS")" ]; then
  echo "fuzz-sql: statements of the findings kept in $FINDINGS" >&2
fi
exit "$rc"
