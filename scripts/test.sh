#!/usr/bin/env bash
# `make test`: build, install, start the throwaway cluster, then every suite. Exits non-zero when
# any suite fails; the last line is "N passed, N failed" over the suites.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

passed=0
failed=0
failed_names=()
suite() {
  local name=$1
  shift
  echo "=== $name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "--- $name: ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    echo "--- $name: FAILED ($((SECONDS - start)) s)"
  fi
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
suite "build + install extension" build_and_install_extension || true
suite "build core, tests (cmake)" build_cmake build all -DIDEM_BENCH=OFF
suite "core unit tests (GoogleTest)" build/core_tests --gtest_brief=1
suite "start throwaway PostgreSQL" scripts/pg.sh start
export IDEM_TEST_URL=$(scripts/pg.sh url)
suite "pg_regress + isolation specs" regress
suite "payload_hash == sha256sum(canonical bytes)" scripts/check-sha256sum.sh
suite "demo script runs to the end (examples/demo.sql)" run_demo_script
suite "integration + stress tests (libpqxx)" build/integration_tests --gtest_brief=1
suite "fuzz smoke (libFuzzer, ${FUZZ_SECONDS:-20} s)" env FUZZ_SECONDS="${FUZZ_SECONDS:-20}" scripts/fuzz.sh

echo
if [ "$failed" -gt 0 ]; then
  printf 'failed suites: %s\n' "${failed_names[*]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
