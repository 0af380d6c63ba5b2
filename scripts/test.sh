#!/usr/bin/env bash
# `make test`: build, install, start the throwaway cluster, then every suite. Exits non-zero when
# any suite fails; ends with a line per suite, "suites: N of M passed" and, last, "tests: N passed,
# N failed" (the cases and checks the suites counted).
# The cluster is stopped at the end (also on failure, Ctrl-C, SIGTERM) if this run started it, and
# left running if it was running before. When it cannot be started, or the server on $PGPORT is not
# this checkout's (data directory) or does not load the extension just built, the run stops there:
# no database suite runs against a server it did not start or check.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

passed=0
failed=0
failed_names=()
report=()         # one line per suite, printed again at the end
tests_passed=0    # test cases and checks the suites reported (GoogleTest, pg_regress, scripts)
tests_failed=0
LOGS=$(mktemp -d)  # each suite's output, for counting its tests; removed by summary

# count_tests LOG: "PASSED FAILED" over the result lines of the runners our suites use:
# GoogleTest ("[  PASSED  ] 108 tests.", "[  FAILED  ] 2 tests, listed below"), pg_regress
# ("All 45 tests passed.", "2 of 45 tests failed."), and our scripts ("41 of 41 checks passed",
# "70 checks passed").
count_tests() {
  awk '
    /^\[  PASSED  \] [0-9]+ tests?\./ { p += $4 }
    /^\[  FAILED  \] [0-9]+ tests?, listed below/ { f += $4 }
    /^ *All [0-9]+ tests passed\./ { p += $2 }
    /^ *[0-9]+ of [0-9]+ tests failed\./ { f += $1; p += $3 - $1 }
    /[0-9]+ of [0-9]+ checks passed/ { for (i = 1; i <= NF; i++) if ($(i+1) == "of" && $(i+3) == "checks") { p += $(i+2); f += $(i+2) - $i } }
    /^[a-z_]+: [0-9]+ checks passed/ { p += $2 }
    END { printf "%d %d\n", p, f }' "$1"
}

suite() {
  local name=$1
  shift
  echo ">>> $name"
  local start=$SECONDS log="$LOGS/$((passed + failed)).log" rc=0
  # Not a pipeline: the suite runs in this shell, so what it sets (pg_up's "this run started the
  # server") holds for the suites after it.
  local out tee_pid
  exec {out}> >(tee "$log")
  tee_pid=$!
  "$@" >&"$out" 2>&1 {out}>&- || rc=$?
  exec {out}>&-
  # tee ends once everything is written, unless a process the suite left running still holds
  # the output (it should not: servers write to their own logs); don't hang on one.
  local waited=0
  while kill -0 "$tee_pid" 2>/dev/null && [ "$waited" -lt 50 ]; do sleep 0.1; waited=$((waited + 1)); done
  kill "$tee_pid" 2>/dev/null
  wait "$tee_pid" 2>/dev/null
  local counts p f
  counts=$(count_tests "$log")
  p=${counts% *}
  f=${counts#* }
  tests_passed=$((tests_passed + p))
  tests_failed=$((tests_failed + f))
  local tally=""
  [ $((p + f)) -gt 0 ] && tally=", $p tests passed, $f failed"
  local verdict=ok
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
  else
    verdict=FAILED
    failed=$((failed + 1))
    failed_names+=("$name")
  fi
  echo "<<< $name: $verdict ($((SECONDS - start)) s$tally)"
  report+=("  $name: $verdict ($((SECONDS - start)) s$tally)")
  [ "$rc" -eq 0 ]
}

# Stops the server if this run started it, then prints the summary; fails when a suite failed.
# No line of ours starts with "ok" or "--- ": CI recognises test runners by their lines (TAP's
# "ok N", go test's "ok  pkg" and "--- PASS"), and a runner it thinks it saw but whose count it
# cannot read makes the run count as one that executed no test.
summary() {
  echo
  pg_down || { failed=$((failed + 1)); failed_names+=("stop throwaway PostgreSQL"); }
  echo "=== summary"
  printf '%s\n' "${report[@]}"
  if [ "$failed" -gt 0 ]; then
    printf 'failed suites: %s\n' "${failed_names[*]}"
  fi
  echo "suites: $passed of $((passed + failed)) passed; tests are the cases and checks the suites counted"
  # The run's last line, alone and in the plain form CI reads as the closing line of a test run.
  echo "tests: $tests_passed passed, $tests_failed failed"
  rm -rf "$LOGS"
  [ "$failed" -eq 0 ]
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
# Before the suites open their connections: the ports of the servers started later stay free.
source "$ROOT/scripts/cluster.sh" && reserve_server_ports
suite "released SQL scripts unchanged (sql/RELEASED)" scripts/check-released.sh
suite "build + install extension" build_and_install_extension || true
suite "build core, tests, the demo programs (cmake)" build_cmake build all -DIDEM_BENCH=OFF -DIDEM_TESTS=ON
suite "core unit tests (GoogleTest)" build/core_tests --gtest_brief=1
suite "client installs as a package (find_package, pkg-config)" scripts/check-client-package.sh
suite "pg.sh port conflict + start/stop discipline" tests/scripts/pg_port_conflict_test.sh
suite "start throwaway PostgreSQL" start_server ||
  { echo "stopping here: no suite runs against a server this run did not start or check"; summary; exit; }
export IDEM_TEST_URL=$(scripts/pg.sh url)
suite "pg_regress + isolation specs" regress
suite "payload_hash == sha256sum(canonical bytes)" scripts/check-sha256sum.sh
suite "demo script runs to the end (examples/demo.sql)" run_demo_script
suite "integration + stress tests (libpqxx)" build/integration_tests --gtest_brief=1
suite "end to end: checkout service, payment processor, order consumer (real HTTP)" scripts/e2e.sh
suite "make demo beside a running make serve (the serve stack keeps running)" tests/scripts/demo_beside_serve_test.sh
# Smoke runs of the reliability and hostile-input suites, each on servers of its own (make crash,
# make failover, make fuzz-sql run them long; docs/reliability.md).
suite "crash loop smoke (5 SIGKILL restarts, amcheck)" env CRASH_RESTARTS=5 scripts/crash.sh
suite "failover smoke (2 promotions of a synchronous standby)" env FAILOVER_COUNT=2 FAILOVER_INSTALL=0 scripts/failover.sh
suite "SQL-surface fuzzer smoke (30 s, 4 sessions)" env FUZZ_SQL_SECONDS=30 FUZZ_SQL_BIN=build/tests/fuzz_sql/fuzz_sql \
  FUZZ_SQL_NO_INSTALL=1 FUZZ_SQL_BRIEF=1 scripts/fuzz-sql.sh
suite "fuzz smoke (libFuzzer, ${FUZZ_SECONDS:-20} s)" env FUZZ_SECONDS="${FUZZ_SECONDS:-20}" scripts/fuzz.sh

summary
