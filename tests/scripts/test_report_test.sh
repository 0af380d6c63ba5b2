#!/usr/bin/env bash
# make test's reporting (scripts/test-report.sh) on fake suites that print what real runners print:
# stdout carries only our lines, the last the one line with counts, none starting the way a runner's
# result line does; a failing suite's log tail reaches stderr behind "  | "; each suite has its log.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/test_report.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

checks=0 fails=0
pass() { checks=$((checks + 1)); echo "holds: $1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAILED: $1" >&2; }
expect_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$3', expected '$2'"; fi; }
seconds_as_n() { sed 's/(\([0-9][0-9]*\) s,/(N s,/'; }

# The runners' own closing lines, as our suites print them.
gtest_pass() {
  echo "[==========] 3 tests from 1 test suite ran. (4 ms total)"
  echo "[  PASSED  ] 3 tests."
}
regress_pass() {
  echo "ok 1        - keys       12 ms"
  echo "test keys ... ok"
  echo "====================="
  echo " All 5 tests passed. "
  echo "====================="
}
script_pass() {
  echo "--- PASS: nothing"
  echo "=== RUN   TestNothing"
  echo "PASS"
  echo "e2e_checks: 7 checks passed"
}
gtest_fail() {
  echo "[  FAILED  ] 1 test, listed below:"
  echo "[  FAILED  ] Keys.Rejects"
  echo "[  PASSED  ] 2 tests."
  echo "not ok 2 - the last line of the failing suite"
  echo "FAIL"
  return 1
}
build_fail() {
  echo "make: *** [Makefile:9: all] Error 2"
  return 2
}

# run_report OUT ERR SUITES...: a make test of the named fake suites in a shell of its own.
run_report() {
  local out=$1 err=$2
  shift 2
  (
    ROOT=$WORK
    TEST_LOG_DIR=$WORK/logs
    # shellcheck source=../../scripts/test-report.sh
    source "$REPO/scripts/test-report.sh"
    report_init
    for s in "$@"; do suite "fake $s" "$s"; done
    report_summary
  ) >"$out" 2>"$err"
}

forbidden='^(\[|ok|not ok|PASS|FAIL|---|test |=====|All )'
counted='[0-9]+ passed, [0-9]+ failed'
check_stdout() {  # WHAT OUT LAST
  local what=$1 out=$2 last=$3
  expect_eq "$what: the last line" "$last" "$(tail -n 1 "$out")"
  expect_eq "$what: no line but the last carries counts" 0 "$(head -n -1 "$out" | grep -cE "$counted")"
  expect_eq "$what: no line starts like a runner's" 0 "$(grep -cE "$forbidden" "$out")"
  expect_eq "$what: no runner line reached stdout" 0 "$(grep -cE 'PASSED|All 5|TestNothing' "$out")"
}

run_report "$WORK/ok.out" "$WORK/ok.err" gtest_pass regress_pass script_pass
expect_eq "all passing: exit status" 0 $?
check_stdout "all passing" "$WORK/ok.out" "tests: 15 passed, 0 failed"
# The duration is bash's SECONDS, which a fake suite may see tick once on a busy machine: N.
expect_eq "all passing: a suite line" "<<< fake gtest_pass: ok (N s, 3 checks)" "$(grep -F '<<< fake gtest_pass' "$WORK/ok.out" | seconds_as_n)"
expect_eq "all passing: the suites line" "suites: 3 of 3 ok" "$(tail -n 2 "$WORK/ok.out" | head -n 1)"
expect_eq "all passing: nothing on stderr" "" "$(cat "$WORK/ok.err")"
expect_eq "all passing: one log per suite" 3 "$(find "$WORK/logs" -name '*.log' | wc -l)"
expect_eq "all passing: the log holds the runner's lines" "[  PASSED  ] 3 tests." \
  "$(tail -n 1 "$WORK/logs/01-fake-gtest-pass.log")"

run_report "$WORK/bad.out" "$WORK/bad.err" gtest_pass gtest_fail build_fail regress_pass
expect_eq "with failures: exit status" 1 $?
# 3 + 2 passed and 1 failing from the runners; the build that failed counts as one.
check_stdout "with failures" "$WORK/bad.out" "tests: 10 passed, 2 failed"
expect_eq "with failures: the suites line" "suites: 2 of 4 ok" "$(tail -n 2 "$WORK/bad.out" | head -n 1)"
expect_eq "with failures: names the suites" "suites that did not pass: fake gtest_fail, fake build_fail" \
  "$(grep '^suites that did not pass' "$WORK/bad.out")"
expect_eq "with failures: the failing suite's line" \
  "<<< fake gtest_fail: FAILED (N s, 2 checks, 1 failing; log: logs/02-fake-gtest-fail.log)" \
  "$(grep -F '<<< fake gtest_fail' "$WORK/bad.out" | seconds_as_n)"
expect_eq "with failures: the tail on stderr, behind '  | '" "  | not ok 2 - the last line of the failing suite" \
  "$(grep -F 'not ok 2' "$WORK/bad.err")"
expect_eq "with failures: every stderr line behind '  | '" 0 "$(grep -cv '^  | ' "$WORK/bad.err")"

(
  ROOT=$WORK TEST_LOG_DIR=$WORK/vlogs VERBOSE=1
  source "$REPO/scripts/test-report.sh"
  report_init
  suite "fake gtest_pass" gtest_pass
) >"$WORK/verbose.out" 2>&1
expect_eq "VERBOSE=1 streams the runner's output" 1 "$(grep -c '^\[  PASSED  \] 3 tests\.$' "$WORK/verbose.out")"
expect_eq "VERBOSE=1 still writes the log" 2 "$(wc -l <"$WORK/vlogs/01-fake-gtest-pass.log")"

echo "test_report_test: $((checks - fails)) of $checks checks passed"
[ "$fails" -eq 0 ]
