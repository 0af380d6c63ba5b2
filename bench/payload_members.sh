#!/usr/bin/env bash
# What naming the differing fields costs a new key (issue 25 part 2): bench/pgbench/new_key.sql
# with idem.payload_members on (the default: a new key's member digests computed and kept) beside
# the same script with it off, alternating in one run on the throwaway cluster; the WAL bytes per
# new key of each (2,000 transactions, one client); and the bytes the digests add to a record of
# the bench's payload (bench_payload: 6 members, 4 more at the second level, 8 at the third).
# usage: [ROUNDS=5] [SECONDS_EACH=8] [CLIENTS="8 1"] bench/payload_members.sh   (CLIENTS= : the WAL and bytes only)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5} SECONDS_EACH=${SECONDS_EACH:-8} CLIENTS=${CLIENTS-8 1}
PGB=bench/pgbench
source scripts/lib.sh
build_and_install_extension >/dev/null
pg_up >/dev/null  # started here: stopped on exit; already running: left running
url=$(scripts/pg.sh url)
db="${url%/*}/idem_bench_members"
psql "$url" -qAtX -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS idem_bench_members" -c "CREATE DATABASE idem_bench_members" >/dev/null
psql "$db" -qAtX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_idempotency" -f "$PGB/setup.sql" >/dev/null
pgbench=build/pg-install/usr/lib/postgresql/15/bin/pgbench
tps() {  # tps CLIENTS on|off
  local out
  out=$(PGOPTIONS="-c idem.payload_members=$2" "$pgbench" -n -M prepared -c "$1" -j "$(( $1 < 2 ? 1 : 2 ))" -T "$SECONDS_EACH" \
    -f "$PGB/new_key.sql" "$db" 2>&1)
  grep -q "number of failed transactions: 0" <<<"$out" && ! grep -q "aborted" <<<"$out" || { echo "pgbench reported failures" >&2; echo "$out" >&2; exit 1; }
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1
}
echo "run $(date -u +%Y%m%d-%H%M%S) at $(git rev-parse --short HEAD): new_key.sql, $SECONDS_EACH s each, $ROUNDS rounds, members on beside off"
for c in $CLIENTS; do
  printf 'clients\tround\ttps_off\ttps_on\ton/off\n'
  ratios=()
  for r in $(seq 1 "$ROUNDS"); do
    off=$(tps "$c" off); on=$(tps "$c" on)
    ratio=$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')
    ratios+=("$ratio")
    printf '%s\t%s\t%.0f\t%.0f\t%s\n' "$c" "$r" "$off" "$on" "$ratio"
  done
  printf '%s\n' "${ratios[@]}" | sort -n | awk -v c="$c" '{ a[NR] = $1 } END { printf "clients %s: median on/off %.3f (min %.3f, max %.3f)\n", c, a[int((NR + 1) / 2)], a[1], a[NR] }'
done
wal() {  # wal on|off: WAL bytes per new key over 2,000 of them
  local before after
  before=$(psql "$db" -qAtX -c "SELECT pg_current_wal_insert_lsn()")
  PGOPTIONS="-c idem.payload_members=$1" "$pgbench" -n -M prepared -c 1 -t 2000 -f "$PGB/new_key.sql" "$db" >/dev/null 2>&1
  after=$(psql "$db" -qAtX -c "SELECT pg_current_wal_insert_lsn()")
  psql "$db" -qAtX -c "SELECT round(pg_wal_lsn_diff('$after', '$before') / 2000.0)"
}
# A warm-up first (its full-page images are the checkpoint's, not the digests'), then turns.
wal on >/dev/null
w_off=() w_on=()
for r in 1 2 3; do w_off+=("$(wal off)"); w_on+=("$(wal on)"); done
echo "WAL bytes per new key (3 turns each, after a warm-up): off ${w_off[*]}; on ${w_on[*]}"
# Server time per acquire, no commit or client in it: 2,000 new keys in one statement, then the
# same 2,000 again (replays), each side in turns.
usecs() {  # usecs on|off RUN: "new_key_us replay_us"
  PGOPTIONS="-c idem.payload_members=$1" psql "$db" -qAtX -v run="$2" <<'SQL'
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
SELECT count(*) FROM generate_series(1, 2000) g,
       LATERAL idem.acquire('acme', 'payload-members-us-' || :'run' || '-' || g, bench_payload('cus_1', 1999, g::text)) a \g /dev/null
SELECT extract(epoch FROM clock_timestamp()) AS t1 \gset
SELECT count(*) FROM generate_series(1, 2000) g,
       LATERAL idem.acquire('acme', 'payload-members-us-' || :'run' || '-' || g, bench_payload('cus_1', 1999, g::text)) a \g /dev/null
SELECT round((:t1 - :t0) * 1e6 / 2000, 1) || '/' || round((extract(epoch FROM clock_timestamp()) - :t1) * 1e6 / 2000, 1);
SQL
}
us_off=() us_on=()
for r in 1 2 3; do us_off+=("$(usecs off "off$r")"); us_on+=("$(usecs on "on$r")"); done
echo "us per acquire, new key and replay (3 turns each): off ${us_off[*]}; on ${us_on[*]}"
psql "$db" -qAtX -c "SELECT 'bytes per record: payload_members ' || round(avg(length(payload_members))) || ' of a row of ' || round(avg(pg_column_size(k.*))) || ' (records with digests: ' || count(payload_members) || ' of ' || count(*) || ')' FROM idem.keys k"
