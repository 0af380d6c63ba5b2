#!/usr/bin/env bash
# What routing through a Citus coordinator costs (issue 23's figures): the delegated
# one-transaction new key (bench/citus/new_key.sql) and a replay (replay.sql), through the
# coordinator of scripts/citus.sh, beside the same scripts on plain PostgreSQL (scripts/pg.sh), in
# alternating rounds of one run. The three Citus servers share this machine's cores with each
# other and with the client: this measures the routing, not scaling.
# Environment: ROUNDS (3), SECONDS_EACH (10), CLIENTS (8), REPLAY_KEYS (2000). Starts either
# cluster when it is not running (and stops it again). BREAKDOWN=1 adds where the time goes: the
# same flows on one node with the C fast path off (idem.fast_path = off: the SQL path Citus mode
# takes), and a replay of one tenant run on its worker directly (no coordinator hop), beside the
# same tenant's replay through the coordinator.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-10}
CLIENTS=${CLIENTS:-8}
REPLAY_KEYS=${REPLAY_KEYS:-2000}
DB=idem_bench_citus
B=bench/citus
pgbench=build/pg-install/usr/lib/postgresql/15/bin/pgbench
[ -x "$pgbench" ] || pgbench=pgbench
stop_pg=0 stop_citus=0
scripts/pg.sh status >/dev/null 2>&1 || { stop_pg=1; scripts/pg.sh start; }
scripts/citus.sh status >/dev/null 2>&1 || { stop_citus=1; scripts/citus.sh start; }
cleanup() {
  psql "$(scripts/pg.sh url)" -qAtX -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  scripts/citus.sh drop-database "$DB" >/dev/null 2>&1 || true
  [ "$stop_pg" = 0 ] || scripts/pg.sh stop
  [ "$stop_citus" = 0 ] || scripts/citus.sh stop
}
trap cleanup EXIT

plain=$(scripts/pg.sh url); plain=${plain%/*}/$DB
citus=$(scripts/citus.sh url coordinator "$DB")
psql "$(scripts/pg.sh url)" -qAtX -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
scripts/citus.sh drop-database "$DB" >/dev/null
scripts/citus.sh database "$DB" >/dev/null
for url in "$plain" "$citus"; do
  PGOPTIONS="-c client_min_messages=warning" psql "$url" -qAtX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_idempotency" -f "$B/setup.sql" >/dev/null
  "$pgbench" -n -M prepared -c 1 -t "$REPLAY_KEYS" -f "$B/populate.sql" "$url" >/dev/null
done

tps() {  # tps URL SCRIPT [PGOPTIONS] [pgbench -D ...]
  local out
  out=$(PGOPTIONS=${3:-} "$pgbench" -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -D replay_keys="$REPLAY_KEYS" \
    ${4:+-D "$4"} -f "$B/$2" "$1" 2>&1)
  # A client that aborts (an unexpected outcome) is not a failed transaction to pgbench.
  grep -q "number of failed transactions: 0" <<<"$out" && ! grep -q "aborted" <<<"$out" || { echo "$2: pgbench reported failures" >&2; echo "$out" >&2; exit 1; }
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1
}
echo "run $(date -u +%Y%m%d-%H%M%S): $CLIENTS clients, $SECONDS_EACH s each; plain = one PostgreSQL node, citus = through the coordinator to 2 workers"
printf 'round\tnew_key_plain\tnew_key_citus\tcitus/plain\treplay_plain\treplay_citus\tcitus/plain\n'
for round in $(seq 1 "$ROUNDS"); do
  np=$(tps "$plain" new_key.sql); nc=$(tps "$citus" new_key.sql)
  rp=$(tps "$plain" replay.sql); rc=$(tps "$citus" replay.sql)
  awk -v r="$round" -v np="$np" -v nc="$nc" -v rp="$rp" -v rc="$rc" \
    'BEGIN { printf "%s\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t%.3f\n", r, np, nc, nc / np, rp, rc, rc / rp }'
done
[ "${BREAKDOWN:-0}" = 1 ] || exit 0
# The tenant bench-t0's worker, and its URL.
port=$(psql "$citus" -qAtX -c "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('idem.keys', 'bench-t0')")
worker=$(scripts/citus.sh url worker1 "$DB"); [ "$port" = "$(sed 's|.*:\([0-9]*\)/.*|\1|' <<<"$worker")" ] || worker=$(scripts/citus.sh url worker2 "$DB")
echo "where the time goes (bench-t0 is on port $port)"
printf 'round\tnew_key_plain_sql_path\treplay_plain_sql_path\treplay_t0_via_coordinator\treplay_t0_on_its_worker\n'
for round in $(seq 1 "$ROUNDS"); do
  ns=$(tps "$plain" new_key.sql "-c idem.fast_path=off"); rs=$(tps "$plain" replay.sql "-c idem.fast_path=off")
  rv=$(tps "$citus" replay_local.sql "" tn=0); rw=$(tps "$worker" replay_local.sql "" tn=0)
  printf '%s\t%.0f\t%.0f\t%.0f\t%.0f\n' "$round" "$ns" "$rs" "$rv" "$rw"
done
