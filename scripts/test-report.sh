# shellcheck shell=bash
# make test's reporting (sourced by scripts/test.sh and by its own test): each suite's output goes
# to a log of its own, and stdout carries only our lines, so that CI reads one verdict.
#
# CI recognises many test runners by their closing lines (GoogleTest's "[  PASSED  ] 3 tests." has
# cmocka's shape, pg_regress says "All 45 tests passed.", TAP "ok 1", go test "--- PASS" and
# "=== RUN") and counts no test at all when it thinks it saw a runner whose count it cannot read.
# So on stdout: ">>> suite", "<<< suite: ok (N s, P checks)", the summary, and last the one line
# anywhere that carries counts: "tests: N passed, N failed". A failing suite's log tail goes to
# stderr, each line behind "  | " (the run is judged by its exit code then). VERBOSE=1 streams
# every runner's output to stdout as well.

TEST_LOG_DIR=${TEST_LOG_DIR:-$ROOT/build/test-logs}
suites_ok=0
suites_failed=0
failed_names=()
report=()       # one line per suite, printed again in the summary
tests_passed=0  # the cases and checks the suites' runners reported
tests_failed=0

report_init() {
  rm -rf "$TEST_LOG_DIR"
  mkdir -p "$TEST_LOG_DIR"
}

# count_tests LOG: "PASSED FAILED" over the result lines of the runners our suites use:
# GoogleTest ("[  PASSED  ] 108 tests.", "[  FAILED  ] 2 tests, listed below"), pg_regress and
# the isolation tester ("All 45 tests passed.", "2 of 45 tests failed."), and our scripts
# ("41 of 41 checks passed", "name: 70 checks passed").
count_tests() {
  awk '
    /^\[  PASSED  \] [0-9]+ tests?\./ { p += $4 }
    /^\[  FAILED  \] [0-9]+ tests?, listed below/ { f += $4 }
    /^ *All [0-9]+ tests passed\./ { p += $2 }
    /^ *[0-9]+ of [0-9]+ tests failed\./ { f += $1; p += $3 - $1 }
    /[0-9]+ of [0-9]+ checks passed/ { for (i = 1; i <= NF; i++) if ($(i+1) == "of" && $(i+3) == "checks") { p += $(i+2); f += $(i+2) - $i } }
    /^[a-z0-9_]+: [0-9]+ checks passed/ { p += $2 }
    END { printf "%d %d\n", p, f }' "$1"
}

# slug NAME: a file name for the suite's log.
slug() { tr -cs 'a-zA-Z0-9' '-' <<<"$1" | sed 's/^-*//; s/-*$//' | cut -c1-60; }

# suite NAME COMMAND...: runs COMMAND in this shell (what it sets, such as pg_up's "this run
# started the server", holds for the suites after it) with its output in the suite's log.
suite() {
  local name=$1
  shift
  local n=$((suites_ok + suites_failed + 1))
  local log
  log="$TEST_LOG_DIR/$(printf '%02d' "$n")-$(slug "$name").log"
  echo ">>> $name"
  local start=$SECONDS rc=0
  if [ "${VERBOSE:-0}" = 1 ]; then
    run_streamed "$log" "$@" || rc=$?
  else
    "$@" >"$log" 2>&1 </dev/null || rc=$?
  fi
  local counts p f
  counts=$(count_tests "$log")
  p=${counts% *}
  f=${counts#* }
  # A suite that failed without a runner's count of failures (a build, a script) counts as one.
  [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
  tests_passed=$((tests_passed + p))
  tests_failed=$((tests_failed + f))
  local tally="$((SECONDS - start)) s"
  [ $((p + f)) -eq 0 ] || tally+=", $p checks"
  [ "$f" -eq 0 ] || tally+=", $f failing"
  local verdict=ok
  if [ "$rc" -eq 0 ]; then
    suites_ok=$((suites_ok + 1))
  else
    verdict=FAILED
    suites_failed=$((suites_failed + 1))
    failed_names+=("$name")
    tally+="; log: ${log#"$ROOT"/}"
    if [ "${VERBOSE:-0}" != 1 ]; then
      echo "--- the last 60 lines of ${log#"$ROOT"/}:" | sed 's/^/  | /' >&2
      tail -n 60 "$log" | sed 's/^/  | /' >&2
    fi
  fi
  echo "<<< $name: $verdict ($tally)"
  report+=("  $name: $verdict ($tally)")
  [ "$rc" -eq 0 ]
}

# run_streamed LOG COMMAND...: COMMAND's output to LOG and stdout (VERBOSE=1). Not a pipeline,
# so COMMAND runs in this shell.
run_streamed() {
  local log=$1 out tee_pid rc=0
  shift
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
  return "$rc"
}

# report_summary: the suites again, then the run's two closing lines; fails when a suite failed.
report_summary() {
  echo "summary of $((suites_ok + suites_failed)) suites (logs in ${TEST_LOG_DIR#"$ROOT"/}/):"
  printf '%s\n' "${report[@]}"
  [ "$suites_failed" -eq 0 ] || printf 'suites that did not pass: %s\n' "$(IFS=,; echo "${failed_names[*]}" | sed 's/,/, /g')"
  echo "suites: $suites_ok of $((suites_ok + suites_failed)) ok"
  echo "tests: $tests_passed passed, $tests_failed failed"
  [ "$suites_failed" -eq 0 ]
}
