#!/usr/bin/env bash
# What the key scope tenant (0.3.6) costs a new key: pgbench new_key.sql under idem.key_scope =
# tenant (the owner lock, the owner index) beside the same flow under route (neither), the bare
# business write (floor.sql) and the hand-written idempotency table (peer_new_key.sql), in
# alternating rounds in one run (this machine is noisy: only ratios hold).
# Environment: ROUNDS (3), SECONDS_EACH (10), CLIENTS (8), PGPORT (54320). Needs the running
# throwaway server of scripts/pg.sh with the extension installed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-10}
CLIENTS=${CLIENTS:-8}
URL=$(scripts/pg.sh url)
DB=idem_bench_scope
DBURL=${URL%/*}/$DB
PGB=bench/pgbench
psql "$URL" -qAtX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB" >/dev/null
psql "$DBURL" -qAtX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_idempotency" -f "$PGB/setup.sql" -f "$PGB/peer_setup.sql" >/dev/null
tps() {  # tps NAME SCRIPT [PGOPTIONS]
  local out
  out=$(PGOPTIONS=${3:-} pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -f "$PGB/$2" "$DBURL" 2>&1)
  grep -q "number of failed transactions: 0" <<<"$out" && ! grep -q "aborted" <<<"$out" || { echo "$1: pgbench reported failures" >&2; echo "$out" >&2; exit 1; }
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1
}
printf 'round\tfloor\tpeer_new_key\tnew_key_route\tnew_key_tenant\ttenant/route\ttenant/peer\ttenant/floor\n'
for round in $(seq 1 "$ROUNDS"); do
  floor=$(tps floor floor.sql)
  peer=$(tps peer peer_new_key.sql)
  route=$(tps route new_key.sql "-c idem.key_scope=route")
  tenant=$(tps tenant new_key.sql)
  awk -v r="$round" -v f="$floor" -v p="$peer" -v ro="$route" -v t="$tenant" \
    'BEGIN { printf "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\n", r, f, p, ro, t, t / ro, t / p, t / f }'
done
psql "$URL" -qAtX -c "DROP DATABASE $DB" >/dev/null
