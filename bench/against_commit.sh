#!/usr/bin/env bash
# Single-node figures against an earlier commit: bench/pgbench new_key.sql and replay.sql on this
# checkout's build (the throwaway cluster, scripts/pg.sh) beside the same scripts on BASE's build
# (a worktree under build/base/, its own cluster on BASE_PORT), in alternating rounds of one run.
# usage: BASE=<commit> [ROUNDS=3] [SECONDS_EACH=8] [CLIENTS=8] [BASE_PORT=54391] bench/against_commit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BASE=${BASE:?BASE=<commit> to compare with}
ROUNDS=${ROUNDS:-3} SECONDS_EACH=${SECONDS_EACH:-8} CLIENTS=${CLIENTS:-8} BASE_PORT=${BASE_PORT:-54391}
sha=$(git rev-parse --short "$BASE")
tree=$ROOT/build/base/$sha
PGB=bench/pgbench
[ -d "$tree" ] || git worktree add -q --detach "$tree" "$sha"
(cd "$tree" && bash -c 'source scripts/lib.sh && build_and_install_extension' >/dev/null)
bash -c 'source scripts/lib.sh && build_and_install_extension' >/dev/null
stop_here=0
scripts/pg.sh status >/dev/null 2>&1 || { stop_here=1; scripts/pg.sh start; }
PGPORT=$BASE_PORT "$tree/scripts/pg.sh" start >/dev/null
trap 'PGPORT=$BASE_PORT "$tree/scripts/pg.sh" stop; [ "$stop_here" = 0 ] || scripts/pg.sh stop' EXIT
here_port=$(scripts/pg.sh url | sed 's|.*:\([0-9]*\)/.*|\1|')
pgbench=build/pg-install/usr/lib/postgresql/15/bin/pgbench
for port in "$BASE_PORT" "$here_port"; do
  url=postgresql://postgres@127.0.0.1:$port
  psql "$url/postgres" -qAtX -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS idem_against" -c "CREATE DATABASE idem_against" >/dev/null
  psql "$url/idem_against" -qAtX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_idempotency" -f "$PGB/setup.sql" -c "CALL bench_populate_replay(2000)" >/dev/null
done
tps() {
  local out
  out=$("$pgbench" -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -D replay_keys=2000 -f "$PGB/$2" "postgresql://postgres@127.0.0.1:$1/idem_against" 2>&1)
  grep -q "number of failed transactions: 0" <<<"$out" && ! grep -q "aborted" <<<"$out" || { echo "$2 on port $1: pgbench reported failures" >&2; echo "$out" >&2; exit 1; }
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1
}
echo "run $(date -u +%Y%m%d-%H%M%S): $CLIENTS clients, $SECONDS_EACH s each; base = $sha, here = $(git rev-parse --short HEAD)"
printf 'round\tnew_key_base\tnew_key_here\there/base\treplay_base\treplay_here\there/base\n'
for r in $(seq 1 "$ROUNDS"); do
  nb=$(tps "$BASE_PORT" new_key.sql); nh=$(tps "$here_port" new_key.sql)
  rb=$(tps "$BASE_PORT" replay.sql); rh=$(tps "$here_port" replay.sql)
  awk -v r="$r" -v nb="$nb" -v nh="$nh" -v rb="$rb" -v rh="$rh" \
    'BEGIN { printf "%s\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t%.3f\n", r, nb, nh, nh / nb, rb, rh, rh / rb }'
done
