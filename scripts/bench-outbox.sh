#!/usr/bin/env bash
# The outbox benchmarks (make bench runs them after the others; `make bench-outbox` alone), each
# beside its peer in the same run: the bare business write, and a plain hand-written queue table
# (INSERT; NOTIFY per statement; consumed with DELETE ... FOR UPDATE SKIP LOCKED):
#   emit overhead   BEGIN; INSERT order; [emit | peer INSERT]; COMMIT   at 1 and 8 clients, also
#                   with the event written in the business write's statement (no extra round trip)
#   claim + ack     batches of 100 from a prefilled backlog, 1 and 4 consumers (fixed work)
#   latency         commit -> consumer at BENCH_OUTBOX_RATE events/s with LISTEN (bench_outbox)
#   idle cost       queries per second of a consumer with nothing to do
#   xmin horizon    BENCH_HORIZON_SECONDS of writes at the rate plus a consumer while another
#                   transaction holds the xmin horizon: consumer calls/s, dead tuples, sizes
# Environment: BENCH_SECONDS (20), BENCH_CLIENTS (8), BENCH_OUTBOX_RATE (350), BENCH_FILL (60000
# events per throughput run), BENCH_HORIZON_SECONDS (300), BENCH_OUT, PGPORT (54320).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

BENCH_SECONDS=${BENCH_SECONDS:-20}
BENCH_CLIENTS=${BENCH_CLIENTS:-8}
RATE=${BENCH_OUTBOX_RATE:-350}
FILL=${BENCH_FILL:-60000}
HORIZON=${BENCH_HORIZON_SECONDS:-300}
BUILD="$ROOT/build-bench"
OUT=${BENCH_OUT:-$BUILD/results/outbox-$(date +%Y%m%d-%H%M%S)}
OBB="$ROOT/bench/outbox"
DB=idem_bench_outbox
export PGPORT=${PGPORT:-54320}
mkdir -p "$OUT"
SUMMARY="$OUT/outbox-summary.txt"
: >"$SUMMARY"
problems=()

step() { echo; echo "== $*"; }
say() { echo "$*" | tee -a "$SUMMARY"; }
expect() {
  if [ "$2" != "$3" ]; then problems+=("$1: got $2, expected $3"); echo "   CHECK FAILED: $1: got $2, expected $3"; fi
}

if [ "${BENCH_OUTBOX_SKIP_BUILD:-0}" != 1 ]; then
  step "building and installing the extension; building bench_outbox"
  build_and_install_extension
  build_cmake build-bench bench_outbox -DIDEM_BENCH=ON -DIDEM_TESTS=OFF
fi
pg_up || { echo "bench-outbox: no PostgreSQL of this checkout on port $PGPORT; stopping" >&2; exit 1; }
check_installed_extension
URL=$(scripts/pg.sh url)
DBURL=${URL%/*}/$DB
psql "$URL" -qAtX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB" >/dev/null
q() { psql "$DBURL" -qAtX -v ON_ERROR_STOP=1 "$@"; }
q -c "CREATE EXTENSION pg_idempotency" >/dev/null
q -f "$OBB/setup.sql" >/dev/null

# pgb TAG SCRIPT CLIENTS [pgbench args]: prints tps; full output in $OUT/TAG.txt.
pgb() {
  local tag=$1 script=$2 clients=$3
  shift 3
  local threads=$((clients < 2 ? clients : 2))
  q -c "CHECKPOINT" >/dev/null
  if ! pgbench -n -M prepared -c "$clients" -j "$threads" "$@" -f "$OBB/$script" "$DBURL" >"$OUT/$tag.txt" 2>&1 ||
    grep -q 'aborted\|number of failed transactions: [1-9]' "$OUT/$tag.txt"; then
    problems+=("$tag: pgbench failed; see $OUT/$tag.txt")
  fi
  sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$OUT/$tag.txt"
}
txns() { sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$OUT/$1.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
reset() { q -c "TRUNCATE ob_orders, peer_queue, idem.outbox_events, idem.outbox_commits, idem.outbox_groups, idem.outbox_cursors, idem.outbox_cursor_states, idem.outbox_consumed, idem.outbox_dead_letters" >/dev/null; }

step "emit overhead on the business write (${BENCH_SECONDS} s per run)"
for c in 1 "$BENCH_CLIENTS"; do
  reset; floor=$(pgb "floor-c$c" floor.sql "$c" -T "$BENCH_SECONDS")
  reset; emit=$(pgb "emit-c$c" emit.sql "$c" -T "$BENCH_SECONDS")
  expect "emit-c$c: one event per transaction" "$(q -c "SELECT count(*) FROM idem.outbox_events")" "$(txns "emit-c$c")"
  expect "emit-c$c: one commit row per transaction" "$(q -c "SELECT count(*) FROM idem.outbox_commits")" "$(txns "emit-c$c")"
  reset; quiet=$(PGOPTIONS="-c idem.outbox_notify=off" pgb "emit_nonotify-c$c" emit.sql "$c" -T "$BENCH_SECONDS")
  reset; one=$(pgb "emit_one_group-c$c" emit_one_group.sql "$c" -T "$BENCH_SECONDS")
  reset; peer=$(pgb "peer_enqueue-c$c" peer_enqueue.sql "$c" -T "$BENCH_SECONDS")
  expect "peer_enqueue-c$c: one row per transaction" "$(q -c "SELECT count(*) FROM peer_queue")" "$(txns "peer_enqueue-c$c")"
  # The same in one statement with the business write: no extra round trip, the server's cost alone.
  reset; inwrite=$(pgb "emit_in_write-c$c" emit_in_write.sql "$c" -T "$BENCH_SECONDS")
  expect "emit_in_write-c$c: one event per transaction" "$(q -c "SELECT count(*) FROM idem.outbox_events")" "$(txns "emit_in_write-c$c")"
  reset; peerin=$(pgb "peer_in_write-c$c" peer_in_write.sql "$c" -T "$BENCH_SECONDS")
  say "$(printf 'emit overhead, %s clients: floor %.0f tps | emit %.0f tps (%sx) | emit without NOTIFY %.0f tps (%sx) | emit, one group %.0f tps (%sx) | peer queue %.0f tps (%sx)' \
    "$c" "$floor" "$emit" "$(ratio "$emit" "$floor")" "$quiet" "$(ratio "$quiet" "$floor")" "$one" "$(ratio "$one" "$floor")" "$peer" "$(ratio "$peer" "$floor")")"
  say "$(printf 'emit in the write statement, %s clients: floor %.0f tps | emit %.0f tps (%sx) | peer queue %.0f tps (%sx)' \
    "$c" "$floor" "$inwrite" "$(ratio "$inwrite" "$floor")" "$peerin" "$(ratio "$peerin" "$floor")")"
done

step "claim + ack throughput: batches of 100 out of a backlog of $FILL events over 8 tenants"
# run_consumer TAG SCRIPT CLIENTS: fixed work (FILL events over CLIENTS consumers), events/s.
run_consumer() {
  local tag=$1 script=$2 clients=$3 before after tps
  before=$(backlog "$script")
  tps=$(pgb "$tag" "$script" "$clients" -t $((FILL / 100 / clients)) -D batch=100)
  after=$(backlog "$script")
  expect "$tag: events consumed = transactions x 100" $((before - after)) $(($(txns "$tag") * 100))
  awk -v t="$tps" 'BEGIN { printf "%.0f", t * 100 }'
}
backlog() {
  case $1 in peer*) q -c "SELECT count(*) FROM peer_queue" ;; *) q -c "SELECT coalesce(sum(backlog), 0) FROM idem.outbox_lag WHERE consumer = 'bench'" ;; esac
}
reset
start=$SECONDS
q -c "CALL bench_fill($((FILL * 4)), 8, 100)" >/dev/null
q -c "VACUUM ANALYZE" >/dev/null
echo "   filled $((FILL * 4)) events (and as many peer rows) in $((SECONDS - start)) s"
declare -A eps
for c in 1 4; do
  eps[ack$c]=$(run_consumer "claim_ack-c$c" claim_ack.sql "$c")
  eps[once$c]=$(run_consumer "claim_once_ack-c$c" claim_once_ack.sql "$c")
  q -c "DELETE FROM peer_queue WHERE id IN (SELECT id FROM peer_queue ORDER BY id DESC LIMIT $FILL)" >/dev/null
  eps[peer$c]=$(run_consumer "peer_consume-c$c" peer_consume.sql "$c")
  say "$(printf 'claim+ack, %s consumer(s): %s events/s | with consume_once %s events/s | peer queue %s events/s (%sx)' \
    "$c" "${eps[ack$c]}" "${eps[once$c]}" "${eps[peer$c]}" "$(ratio "${eps[ack$c]}" "${eps[peer$c]}")")"
done

step "commit -> consumer latency at $RATE events/s (${BENCH_SECONDS} s, LISTEN)"
reset
ours=$("$BUILD/bench_outbox" --url "$DBURL" --mode latency --rate "$RATE" --seconds "$BENCH_SECONDS") ||
  problems+=("latency: not every committed event was received: $ours")
reset
peer=$("$BUILD/bench_outbox" --url "$DBURL" --mode latency --rate "$RATE" --seconds "$BENCH_SECONDS" --peer 1) ||
  problems+=("latency (peer): not every row was received: $peer")
say "latency at $RATE/s: ours $ours"
say "latency at $RATE/s: peer $peer"

step "idle cost: queries per second of one consumer with nothing to do (${BENCH_SECONDS} s each)"
reset
say "idle, LISTEN + 5 s safety poll: $("$BUILD/bench_outbox" --url "$DBURL" --mode idle --seconds "$BENCH_SECONDS")"
say "idle, no LISTEN (pooler), 1 s poll: $("$BUILD/bench_outbox" --url "$DBURL" --mode idle --seconds "$BENCH_SECONDS" --listen 0)"
say "idle, peer poller every 100 ms: $("$BUILD/bench_outbox" --url "$DBURL" --mode idle --seconds "$BENCH_SECONDS" --peer 1 --peer-poll-ms 100)"

step "xmin horizon held for $HORIZON s: writes at $RATE/s + one consumer, ours then the peer"
dead() {
  q -F ' ' -c "SELECT string_agg(relname || '=' || n_dead_tup, ' ' ORDER BY relname) FROM pg_stat_user_tables
                WHERE relname IN ($1)"
}
# horizon NAME WRITER CONSUMER TABLES RETENTION: RETENTION is the SQL that ages acked rows out,
# run every fifth of the run (ours: purge_outbox; the peer deletes as it consumes).
horizon() {
  local name=$1 writer=$2 consumer=$3 tables=$4 retention=$5
  reset
  q -c "VACUUM ANALYZE" >/dev/null
  # The holder: a repeatable-read snapshot that stays open for the whole run.
  psql "$DBURL" -qAtX -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM ob_orders" \
    -c "SELECT pg_sleep($HORIZON + 20)" -c "COMMIT" >/dev/null 2>&1 &
  local holder=$!
  sleep 1
  pgbench -n -M prepared -c 2 -j 2 -R "$RATE" -T "$HORIZON" -f "$OBB/$writer" "$DBURL" >"$OUT/horizon-$name-writer.txt" 2>&1 &
  local w=$!
  pgbench -n -M prepared -c 1 -j 1 -T "$HORIZON" -P $((HORIZON / 5)) -D batch=100 -f "$OBB/$consumer" "$DBURL" \
    >"$OUT/horizon-$name-consumer.txt" 2>&1 &
  local c=$!
  for i in 1 2 3 4 5; do
    sleep $((HORIZON / 5))
    local purged=""
    [ -z "$retention" ] || purged=" | retention deleted $(q -c "$retention")"
    say "   $name t=$((i * HORIZON / 5))s dead: $(dead "$tables")$purged"
  done
  wait "$w" "$c" || problems+=("horizon $name: pgbench failed")
  grep '^progress' "$OUT/horizon-$name-consumer.txt" | sed "s/^/   $name consumer calls: /" | tee -a "$SUMMARY"
  say "   $name sizes: $(q -c "SELECT string_agg(relname || '=' || pg_size_pretty(pg_total_relation_size(relid)), ' ' ORDER BY relname)
                          FROM pg_stat_user_tables WHERE relname IN ($tables)")"
  kill "$holder" 2>/dev/null || true
  q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%'" >/dev/null
  wait "$holder" 2>/dev/null || true
}
horizon ours emit.sql claim_ack.sql "'outbox_events','outbox_commits','outbox_cursors','outbox_cursor_states','outbox_consumed'" \
  "SELECT idem.purge_outbox('0 seconds', 100000)"
say "   ours backlog after the run: $(backlog claim_ack.sql)"
horizon peer peer_enqueue.sql peer_consume.sql "'peer_queue'" ""
say "   peer backlog after the run: $(backlog peer_consume.sql)"

echo
echo "== outbox summary (also in $SUMMARY)"
cat "$SUMMARY"
if [ ${#problems[@]} -gt 0 ]; then
  printf 'PROBLEM: %s\n' "${problems[@]}"
  exit 1
fi
