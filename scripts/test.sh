#!/usr/bin/env bash
# `make test`: install what is missing, build, start the throwaway cluster, then every suite.
# Exits non-zero when any suite fails. Each suite's output goes to build/test-logs/ (VERBOSE=1
# streams it too); stdout carries only the lines of scripts/test-report.sh, ending with
# "tests: N passed, N failed" (the cases and checks the suites counted).
# The cluster is stopped at the end (also on failure, Ctrl-C, SIGTERM) if this run started it, and
# left running if it was running before. When it cannot be started, or the server on $PGPORT is not
# this checkout's (data directory) or does not load the extension just built, the run stops there:
# no database suite runs against a server it did not start or check.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

source "$ROOT/scripts/test-report.sh"

# Stops the server if this run started it, then prints the summary; fails when a suite failed.
summary() {
  echo
  pg_down || { suites_failed=$((suites_failed + 1)); failed_names+=("stop throwaway PostgreSQL"); tests_failed=$((tests_failed + 1)); }
  report_summary
}

# Start (or find running) this checkout's cluster, check it is the one on $PGPORT and that it
# loads the extension just installed.
start_server() {
  pg_up && check_installed_extension
}

regress() {
  rm -rf regress/results
  if ! make -s installcheck PGPORT="$PGPORT"; then
    find regress/results -name '*.diffs' -exec cat {} + | head -200
    return 1
  fi
}

run_demo_script() {
  psql "$IDEM_TEST_URL" -qAtX -c "DROP DATABASE IF EXISTS idem_demo_check" -c "CREATE DATABASE idem_demo_check" >/dev/null &&
    psql "${IDEM_TEST_URL%/*}/idem_demo_check" -X -q -v ON_ERROR_STOP=1 -f examples/demo.sql >/dev/null 2>&1
}

export PGPORT=${PGPORT:-54320}
report_init
suite "install what is missing (apt)" scripts/install-deps.sh
# Before the suites open their connections: the ports of the servers started later stay free.
source "$ROOT/scripts/cluster.sh" && reserve_server_ports
suite "released SQL scripts unchanged (sql/RELEASED)" scripts/check-released.sh
suite "one version everywhere (VERSION)" scripts/check-versions.sh
suite "one PostgreSQL call a guard, no C++ inside (check-guards)" scripts/check-guards.sh
suite "check-guards flags a bad fixture, passes a good one" tests/scripts/check_guards_test.sh
suite "build + install extension" build_and_install_extension || true
suite "build core, tests, the demo programs (cmake)" build_cmake build all -DIDEM_BENCH=OFF -DIDEM_TESTS=ON
suite "core unit tests (GoogleTest)" build/core_tests --gtest_brief=1
suite "client installs as a package (find_package, pkg-config)" scripts/check-client-package.sh
suite "make test's reporting on fake suites" tests/scripts/test_report_test.sh
suite "the SQL layout check fails on each breach (self-test)" tests/scripts/check_sql_layout_test.sh
suite "pg.sh port conflict + start/stop discipline" tests/scripts/pg_port_conflict_test.sh
suite "start throwaway PostgreSQL" start_server ||
  { echo "stopping here: no suite runs against a server this run did not start or check"; summary; exit; }
export IDEM_TEST_URL=$(scripts/pg.sh url)
suite "SQL layout: each function in one latest.sql, the lists complete" scripts/check-sql-layout.sh "$IDEM_TEST_URL"
suite "pg_regress + isolation specs" regress
suite "pg_regress + isolation specs, the general path (idem.fast_path = off)" scripts/regress-general-path.sh
suite "payload_hash == sha256sum(canonical bytes)" scripts/check-sha256sum.sh
suite "demo script runs to the end (examples/demo.sql)" run_demo_script
suite "pg_dump and restore give back the database dumped" tests/scripts/dump_restore_test.sh
suite "integration + stress tests (libpqxx)" build/integration_tests --gtest_brief=1
suite "protocol model, the general path (idem.fast_path = off)" scripts/with-general-path.sh \
  build/integration_tests --gtest_brief=1 --gtest_filter='ProtocolModel.*'
suite "end to end: checkout service, payment processor, order consumer (real HTTP)" scripts/e2e.sh
suite "make demo beside a running make serve (the serve stack keeps running)" tests/scripts/demo_beside_serve_test.sh
# Smoke runs of the reliability and hostile-input suites, each on servers of its own (make crash,
# make failover, make fuzz-sql run them long; docs/reliability.md).
suite "crash loop smoke (5 SIGKILL restarts, amcheck)" env CRASH_RESTARTS=5 scripts/crash.sh
suite "failover smoke (2 promotions of a synchronous standby)" env FAILOVER_COUNT=2 FAILOVER_INSTALL=0 scripts/failover.sh
suite "SQL-surface fuzzer smoke (30 s, 4 sessions)" env FUZZ_SQL_SECONDS=30 FUZZ_SQL_BIN=build/tests/fuzz_sql/fuzz_sql \
  FUZZ_SQL_NO_INSTALL=1 FUZZ_SQL_BRIEF=1 scripts/fuzz-sql.sh
suite "Citus smoke: a coordinator and two workers, tenants on both (make citus-test)" env CITUS_SMOKE=1 scripts/citus-test.sh
suite "fuzz smoke (libFuzzer, ${FUZZ_SECONDS:-20} s)" env FUZZ_SECONDS="${FUZZ_SECONDS:-20}" scripts/fuzz.sh

summary
