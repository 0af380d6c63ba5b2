#!/usr/bin/env bash
# Single-node figures against an earlier commit: bench/pgbench new_key.sql and replay.sql on this
# checkout's build (the throwaway cluster, scripts/pg.sh) beside the same scripts on BASE's build
# (a worktree under build/base/, its own cluster on BASE_PORT), in alternating rounds of one run.
# Then the server time per acquire on each (2,000 in one statement, no commit, no client).
# usage (ROUNDS=0: the server time only): BASE=<commit> [ROUNDS=3] [SECONDS_EACH=8] [CLIENTS=8] [BASE_PORT=54391] bench/against_commit.sh
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
new_ratios=() replay_ratios=()
for r in $(seq 1 "$ROUNDS"); do
  # Odd rounds run the base first, even rounds this checkout: neither always meets the other's leftovers.
  if ((r % 2)); then
    nb=$(tps "$BASE_PORT" new_key.sql); nh=$(tps "$here_port" new_key.sql)
    rb=$(tps "$BASE_PORT" replay.sql); rh=$(tps "$here_port" replay.sql)
  else
    nh=$(tps "$here_port" new_key.sql); nb=$(tps "$BASE_PORT" new_key.sql)
    rh=$(tps "$here_port" replay.sql); rb=$(tps "$BASE_PORT" replay.sql)
  fi
  awk -v r="$r" -v nb="$nb" -v nh="$nh" -v rb="$rb" -v rh="$rh" \
    'BEGIN { printf "%s\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t%.3f\n", r, nb, nh, nh / nb, rb, rh, rh / rb }'
  new_ratios+=("$(awk -v a="$nh" -v b="$nb" 'BEGIN { printf "%.3f", a / b }')")
  replay_ratios+=("$(awk -v a="$rh" -v b="$rb" 'BEGIN { printf "%.3f", a / b }')")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { printf "%.3f (%.3f-%.3f)", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
[ "$ROUNDS" = 0 ] || echo "median here/base: new key $(median "${new_ratios[@]}"), replay $(median "${replay_ratios[@]}")"

# Server time per acquire, without commit or client: 2,000 new keys in one statement, then the
# same 2,000 again (replays), on each side in turns.
usecs() {  # usecs PORT RUN: "new_key_us/replay_us"
  psql "postgresql://postgres@127.0.0.1:$1/idem_against" -qAtX -v ON_ERROR_STOP=1 -v run="$2" <<'SQL'
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
SELECT count(*) FROM generate_series(1, 2000) g,
       LATERAL idem.acquire('acme', 'against-us-key-' || :'run' || '-' || lpad(g::text, 6, '0'), bench_payload('cus_1', 1999, g::text)) a \g /dev/null
SELECT extract(epoch FROM clock_timestamp()) AS t1 \gset
SELECT count(*) FROM generate_series(1, 2000) g,
       LATERAL idem.acquire('acme', 'against-us-key-' || :'run' || '-' || lpad(g::text, 6, '0'), bench_payload('cus_1', 1999, g::text)) a \g /dev/null
SELECT round((:t1 - :t0) * 1e6 / 2000, 1) || '/' || round((extract(epoch FROM clock_timestamp()) - :t1) * 1e6 / 2000, 1);
SQL
}
us_base=() us_here=()
for r in 1 2 3 4 5 6; do  # in alternating order, as the rounds above
  if ((r % 2)); then us_base+=("$(usecs "$BASE_PORT" "b$r")"); us_here+=("$(usecs "$here_port" "h$r")")
  else us_here+=("$(usecs "$here_port" "h$r")"); us_base+=("$(usecs "$BASE_PORT" "b$r")"); fi
done
echo "server us per acquire, new key/replay (6 turns each): base ${us_base[*]}; here ${us_here[*]}"
