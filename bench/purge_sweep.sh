#!/usr/bin/env bash
# The purge beside traffic, swept over pace and call size (docs/hot-path.md, "The purge"): for each
# RATE:BATCH pair, 300,000 expired records are purged by bench_purge_all(RATE, BATCH) while
# pgbench runs new keys at 350/s from 8 clients for 12 s; prints the new keys' p99 beside the same
# run without a purge, which goes first and last (the VM is noisy: compare within one sweep).
#   bench/purge_sweep.sh [RATE:BATCH ...]     default: 25000:500 25000:100 20000:100 20000:50 20000:25
# Uses this checkout's throwaway cluster (scripts/pg.sh) and a database of its own, dropped after.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
export PGPORT=${PGPORT:-54320}
pg_up
URL=$(scripts/pg.sh url)
DB=idem_purge_sweep
DBURL=${URL%/*}/$DB
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"; psql "$URL" -qAtX -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true; pg_down' EXIT
psql "$URL" -qAtX -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
q() { psql "$DBURL" -qAtX -v ON_ERROR_STOP=1 "$@"; }
q -c "CREATE EXTENSION pg_idempotency" -f bench/pgbench/setup.sql >/dev/null

p99() { cat "$OUT"/log.* | awk '{ print $3 }' | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int(NR * 0.99)] / 1000 }'; }

# one RATE BATCH: RATE "none" runs the new keys alone.
one() {
  local rate=$1 batch=$2 purging=
  q -c "TRUNCATE bench_orders, idem.keys, idem.retired_keys" -c "CALL bench_expired_records(300000)" \
    -c "VACUUM ANALYZE idem.keys" -c "CHECKPOINT" >/dev/null
  rm -f "$OUT"/log.*
  if [ "$rate" != none ]; then
    q -c "CALL bench_purge_all($rate, $batch)" >/dev/null &
    purging=$!
  fi
  pgbench -n -M prepared -c 8 -j 2 -T 12 -R 350 -l --log-prefix="$OUT/log" -f bench/pgbench/new_key.sql "$DBURL" >/dev/null 2>&1
  [ -z "$purging" ] || wait "$purging"
  local figures=""
  if [ "$rate" != none ]; then
    figures=$(q -F ' ' -c "SELECT records, round(records / nullif(seconds, 0)) FROM bench_purge_runs ORDER BY ctid DESC LIMIT 1")
    figures=" purged ${figures% *} at ${figures#* } records/s"
  fi
  printf '%-10s %-6s p99 %s ms%s\n' "$rate" "$batch" "$(p99)" "$figures"
}

echo "rate       batch  new keys at 350/s, 8 clients, 12 s"
one none -
for pair in "${@:-25000:500 25000:100 20000:100 20000:50 20000:25}"; do
  for p in $pair; do one "${p%:*}" "${p#*:}"; done
done
one none -
