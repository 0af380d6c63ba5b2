#!/usr/bin/env bash
# scripts/check-sql-layout.sh fails on each breach it names: run on copies of the tree, each
# broken in one way, it must exit non-zero and say what; on the untouched copy it must pass.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
copy() { rm -rf "$work/t" && mkdir -p "$work/t/scripts" && cp "$root/scripts/check-sql-layout.sh" "$work/t/scripts/" && cp -r "$root/sql" "$work/t/"; }
expect() { # expect NAME PASS|FAIL PATTERN: run the check on the copy
  local name=$1 want=$2 pattern=$3 out rc
  out=$("$work/t/scripts/check-sql-layout.sh" 2>&1); rc=$?
  if { [ "$want" = PASS ] && [ $rc = 0 ]; } || { [ "$want" = FAIL ] && [ $rc != 0 ] && grep -q -- "$pattern" <<<"$out"; }; then
    echo "ok: $name"; passed=$((passed + 1))
  else
    echo "FAILED: $name (exit $rc): $out"; failed=$((failed + 1))
  fi
}
copy; expect "the tree as it is passes" PASS ""
copy; echo "-- edited" >>"$work/t/sql/udfs/acquire/latest.sql"
expect "latest.sql edited without its snapshot" FAIL "udfs/acquire/latest.sql differs from its newest snapshot"
copy; cp "$work/t/sql/udfs/acquire/latest.sql" "$work/t/sql/udfs/acquire/9.9.9.sql"; echo "-- 9.9.9" >>"$work/t/sql/udfs/acquire/9.9.9.sql"
expect "a newer snapshot than latest.sql" FAIL "differs from its newest snapshot 9.9.9.sql"
copy; touch "$work/t/sql/udfs/ack/notes.txt"
expect "a stray file beside the snapshots" FAIL "udfs/ack/notes.txt: only latest.sql and <version>.sql belong here"
copy; rm "$work/t/sql/udfs/nack/"[0-9]*.sql
expect "a function without a snapshot" FAIL "udfs/nack/ has no <version>.sql snapshot"
copy; rm "$work/t/sql/udfs/claim/latest.sql"
expect "a function without latest.sql" FAIL "udfs/claim/ has no latest.sql"
copy; sed -i '/udfs\/emit\/latest.sql/d' "$work/t/sql/pg_idempotency.sql.in"
expect "the full install leaves a function out" FAIL "includes udfs/emit/latest.sql 0 times"
copy; echo '#include "udfs/emit/latest.sql"' >>"$work/t/sql/pg_idempotency.sql.in"
expect "the full install includes a function twice" FAIL "includes udfs/emit/latest.sql 2 times"
copy; sed -i 's/FUNCTION idem.nack(/FUNCTION idem.nack_other(/' "$work/t/sql/udfs/nack/latest.sql" "$work/t/sql/udfs/nack/0.3.6.sql"
expect "a file creates a function of another name" FAIL "creates a function not named idem.nack"
copy; mkdir -p "$work/t/sql/upgrades"; printf '#include "udfs/ack/latest.sql"\n' >"$work/t/sql/upgrades/pg_idempotency--0.3.6--9.9.9.sql.in"
expect "an upgrade includes a latest.sql" FAIL "includes udfs/ack/latest.sql"
copy; printf '#include "udfs/ack/0.3.6.sql"\n' >"$work/t/sql/upgrades/pg_idempotency--0.3.6--9.9.9.sql.in"
expect "an upgrade includes another version's snapshot" FAIL "includes udfs/ack/0.3.6.sql"
echo "check-sql-layout self-test: $passed of $((passed + failed)) checks passed"
[ "$failed" = 0 ]
