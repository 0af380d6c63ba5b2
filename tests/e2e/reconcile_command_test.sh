#!/usr/bin/env bash
# processor-reconcile as an operator runs it, after the demo driver planted one of each
# discrepancy (examples/demo-driver --plant): it loads the processor's export over HTTP, lists
# the 9 planted rows and exits 1; bad arguments exit 2; a processor that does not answer exits 3.
#   tests/e2e/reconcile_command_test.sh PROCESSOR_URL DB_URI SINCE
set -euo pipefail
PROCESSOR=${1:?processor URL}
DB=${2:?database URI}
SINCE=${3:?the start of the window}
BIN="$(cd "$(dirname "$0")/../.." && pwd)/build/examples/reconcile/processor-reconcile"
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
CHECKS=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then CHECKS=$((CHECKS + 1)); else echo "reconcile_command_test: FAILED: $name" >&2; cat "$OUT" >&2; exit 1; fi
}
rc=0
"$BIN" --processor "$PROCESSOR" --db "$DB" --since "$SINCE" --table reconcile_e2e >"$OUT" 2>&1 || rc=$?
check "discrepancies exit 1" [ "$rc" = 1 ]
check "the summary counts the 9 planted rows" grep -qx \
  'processor-reconcile: 9 discrepancies: 1 amount_mismatch, 2 duplicate_charge, 1 missing_charge, 1 missing_refund, 2 orphan_charge, 1 orphan_refund, 1 refund_exceeds_charge (docs/runbook.md says what to do with each)' "$OUT"
check "one report line per row, under a header" [ "$(grep -cE '^(orphan_|missing_|duplicate_|amount_|refund_)' "$OUT")" = 9 ]
check "the export was loaded into the named table" [ "$(psql "$DB" -XAtc "SELECT count(*) > 0 FROM reconcile_e2e WHERE object = 'refund'")" = t ]
# Loaded again, in a session whose TimeZone and DateStyle differ: each charge and refund still one
# row (replaced, not appended), a row the processor no longer lists in the window is gone, and the
# report is the same.
before=$(psql "$DB" -XAtc "SELECT count(*) FROM reconcile_e2e")
psql "$DB" -XAtqc "INSERT INTO reconcile_e2e (id, object, amount_cents, currency, status, created)
                   VALUES ('ch_not_listed_any_more', 'charge', 100, 'usd', 'succeeded', now())"
rc=0
PGOPTIONS='-c TimeZone=Pacific/Kiritimati -c DateStyle=SQL,DMY' \
  "$BIN" --processor "$PROCESSOR" --db "$DB" --since "$SINCE" --table reconcile_e2e >"$OUT" 2>&1 || rc=$?
check "a second load keeps one row per object, the stale one gone" \
  [ "$(psql "$DB" -XAtc "SELECT count(*) || ' ' || count(DISTINCT id) FROM reconcile_e2e")" = "$before $before" ]
check "another TimeZone and DateStyle: the same 9 rows" eval '[ "$rc" = 1 ] && grep -q "^processor-reconcile: 9 discrepancies: " "$OUT"'
rc=0
"$BIN" --processor "$PROCESSOR" --db "$DB" --since "not a time" >"$OUT" 2>&1 || rc=$?
check "a bad --since exits 2, naming it" eval '[ "$rc" = 2 ] && grep -q "^processor-reconcile: --since not a time: " "$OUT"'
rc=0
"$BIN" --db "$DB" >"$OUT" 2>&1 || rc=$?
check "no --processor exits 2" eval '[ "$rc" = 2 ] && grep -q "^processor-reconcile: --processor is required" "$OUT"'
# A window that holds nothing would read as "every charge accounted for": refused.
for bad in "--hours 0" "--hours -5" "--hours 1e9" "--since 2099-01-01" "--since 2026-01-01 --hours 3"; do
  rc=0
  # shellcheck disable=SC2086  # the words of $bad are arguments
  "$BIN" --processor "$PROCESSOR" --db "$DB" $bad >"$OUT" 2>&1 || rc=$?
  check "$bad exits 2, naming the window" eval '[ "$rc" = 2 ] && grep -q "^processor-reconcile: --\(hours\|since\)" "$OUT" && ! grep -q "none:" "$OUT"'
done
rc=0
"$BIN" --help >"$OUT" 2>&1 || rc=$?
check "--help exits 0 with the usage" eval '[ "$rc" = 0 ] && grep -q "^usage: processor-reconcile" "$OUT"'
rc=0
"$BIN" --processor http://127.0.0.1:9 --db "$DB" --hours 1 >"$OUT" 2>&1 || rc=$?
check "an unreachable processor exits 3, naming the request" eval '[ "$rc" = 3 ] && grep -q "^processor-reconcile: GET /v1/charges?limit=100&created_gte=[0-9]*: no answer" "$OUT"'
psql "$DB" -XAtqc "DROP TABLE reconcile_e2e"
echo "reconcile_command_test: $CHECKS checks passed"
