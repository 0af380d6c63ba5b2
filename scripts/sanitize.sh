#!/usr/bin/env bash
# `make sanitize`: core, the client and their GoogleTest suites built with AddressSanitizer (+ leak
# checking) and UBSan in build-sanitize/, then core_tests and integration_tests run. Exits non-zero
# on any test failure or sanitizer report; the last line counts both.
# IDEM_TEST_URL, when set, names the server for integration_tests (the caller vouches that it loads
# this checkout's extension); otherwise the extension is built and installed and this checkout's
# throwaway cluster is used (started, and stopped again, if it was not running), like make model.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

DIR=build-sanitize
FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
LOGS="$ROOT/$DIR/sanitizer-logs"

echo "sanitize: building core_tests and integration_tests in $DIR/ (ASan + UBSan)"
build_cmake "$DIR" "core_tests integration_tests" -DIDEM_BENCH=OFF -DIDEM_TESTS=ON \
  -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$FLAGS"

if [ -z "${IDEM_TEST_URL:-}" ]; then
  build_and_install_extension
  export PGPORT=${PGPORT:-54320}
  pg_up || { echo "sanitize: no PostgreSQL of this checkout on port $PGPORT; stopping" >&2; exit 1; }
  check_installed_extension
  IDEM_TEST_URL=$(scripts/pg.sh url)
fi
export IDEM_TEST_URL

# Reports go to files as well as the exit status, so they can be counted (a run that aborts on its
# first finding has one) and shown together at the end. The suppressions cover third-party code
# only; each entry says why (tests/sanitize/).
rm -rf "$LOGS" && mkdir -p "$LOGS"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$LOGS/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$LOGS/ubsan"
if [ -s tests/sanitize/lsan.supp ]; then
  export LSAN_OPTIONS="suppressions=$ROOT/tests/sanitize/lsan.supp:print_suppressions=0"
fi
if [ -s tests/sanitize/ubsan.supp ]; then
  UBSAN_OPTIONS="$UBSAN_OPTIONS:suppressions=$ROOT/tests/sanitize/ubsan.supp"
fi

# run_suite NAME: runs $DIR/NAME and records its passed-test count in PASSED[NAME].
failures=0
declare -A PASSED
run_suite() {
  local name=$1 out="$LOGS/$1.out" rc=0
  echo "== $name"
  "$DIR/$name" --gtest_brief=1 >"$out" 2>&1 || rc=$?
  tail -n 5 "$out"
  local passed
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$out" | tail -1)
  PASSED[$name]=${passed:-0}
  if [ "$rc" -ne 0 ]; then
    echo "sanitize: $name exited with status $rc" >&2
    grep -E '^\[  FAILED  \]' "$out" >&2 || true
    failures=$((failures + 1))
  fi
}
run_suite core_tests
run_suite integration_tests

shopt -s nullglob
reports=("$LOGS"/asan.* "$LOGS"/ubsan.*)
for report in "${reports[@]}"; do
  echo "---- sanitizer report $report" >&2
  cat "$report" >&2
done

echo "sanitize: core_tests ${PASSED[core_tests]} passed, integration_tests ${PASSED[integration_tests]} passed, ${#reports[@]} sanitizer findings"
[ "$failures" -eq 0 ] && [ "${#reports[@]}" -eq 0 ]
