#!/usr/bin/env bash
# `make bench`: fingerprint throughput in C++ (Google Benchmark) and in SQL (payload_hash next to
# sha256 of the jsonb text), the cost per key as an empty store grows (bench/sql_store_growth.sql,
# beside the bare write), then pgbench flows against a floor of the bare business write:
#   floor      BEGIN; INSERT the order; COMMIT                       (bench/pgbench/floor.sql)
#   new_key    BEGIN; acquire a new key; INSERT; complete; COMMIT    (new_key.sql)
#   replay     BEGIN; acquire a resolved key, same payload; COMMIT   (replay.sql)
#   contended  every client on the same 10 keys, short ttl           (contended.sql)
#   peer_new_key / peer_replay  the same flows on a hand-written idempotency table (peer_setup.sql)
#   ceiling_new_key / ceiling_replay  the bounds on any implementation of those two flows: new_key's
#              five statements with acquire and complete doing nothing, an audited replay's one write
# each at 1 and BENCH_CLIENTS clients for BENCH_SECONDS, plus floor and new_key at a fixed rate
# (pgbench -R BENCH_RATE) for p99 latency. Ends with one table; full output in the results folder.
#
# Environment: BENCH_SECONDS (20), BENCH_MIN_TIME (Google Benchmark min time per case, 0.5 s),
# BENCH_CLIENTS (8), BENCH_RATE (350 tps), BENCH_REPLAY_KEYS (10000), BENCH_CONTENTION_TTL_MS (5),
# BENCH_SQL_REPS (7), BENCH_GROWTH_KEYS (100000), BENCH_STORAGE_KEYS (100000), BENCH_PURGE_KEYS (300000),
# BENCH_PURGE_RATE (20000 records/s for the paced purge under load), BENCH_PURGE_BATCH (100 a call),
# BENCH_CLIENT_SECONDS (10), BENCH_OUTBOX (1; 0 skips the outbox benchmarks), BENCH_OUT (results folder),
# JOBS (build parallelism), PGPORT (54320).
# The cluster is the durable throwaway one of scripts/pg.sh (fsync and synchronous_commit on).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

BENCH_SECONDS=${BENCH_SECONDS:-20}
BENCH_MIN_TIME=${BENCH_MIN_TIME:-0.5}
BENCH_CLIENTS=${BENCH_CLIENTS:-8}
BENCH_RATE=${BENCH_RATE:-350}
BENCH_PURGE_RATE=${BENCH_PURGE_RATE:-20000}
BENCH_PURGE_BATCH=${BENCH_PURGE_BATCH:-100}
BENCH_REPLAY_KEYS=${BENCH_REPLAY_KEYS:-10000}
BENCH_CONTENTION_TTL_MS=${BENCH_CONTENTION_TTL_MS:-5}
BENCH_SQL_REPS=${BENCH_SQL_REPS:-7}
BENCH_GROWTH_KEYS=${BENCH_GROWTH_KEYS:-100000}
BUILD="$ROOT/build-bench"
OUT=${BENCH_OUT:-$BUILD/results/$(date +%Y%m%d-%H%M%S)}
PGB="$ROOT/bench/pgbench"
DB=idem_bench
export PGPORT=${PGPORT:-54320}

mkdir -p "$OUT/logs"
RESULTS="$OUT/results.tsv"
: >"$RESULTS"
printf 'run\tWAL_bytes/txn\tfull_pages/txn\tWAL_records/txn\n' >"$OUT/wal.tsv"
problems=()
started=$SECONDS

step() { echo; echo "== $*"; }

step "building and installing the extension; building bench_fingerprint into build-bench/"
build_and_install_extension
# Its own build folder: build/ belongs to make test (IDEM_BENCH off there). RelWithDebInfo is
# -O2 like the extension's PGXS build, so C++ and SQL figures compare like with like.
build_cmake build-bench bench_fingerprint -DIDEM_BENCH=ON -DIDEM_TESTS=OFF

step "C++ fingerprint throughput (Google Benchmark, min time ${BENCH_MIN_TIME} s per case; M/s = MiB/s of JSON text)"
"$BUILD/bench_fingerprint" --benchmark_min_time="$BENCH_MIN_TIME" \
  --benchmark_out="$OUT/bench_fingerprint.json" --benchmark_out_format=json 2>&1 |
  grep -v 'Library was built as DEBUG'  # Debian's libbenchmark says so; our code is -O2

step "starting the throwaway PostgreSQL 15 cluster and a fresh database $DB"
# Stopped at the end (also on failure or Ctrl-C) if this run started it; left alone otherwise.
pg_up || { echo "bench: no PostgreSQL of this checkout on port $PGPORT; stopping" >&2; exit 1; }
check_installed_extension
URL=$(scripts/pg.sh url)
DBURL=${URL%/*}/$DB
psql "$URL" -qAtX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB" >/dev/null
q() { psql "$DBURL" -qAtX -v ON_ERROR_STOP=1 "$@"; }
q -c "CREATE EXTENSION pg_idempotency" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
q -f "$PGB/setup.sql" -f "$PGB/peer_setup.sql" >/dev/null
echo "server: $(q -c "SELECT 'fsync=' || current_setting('fsync') || ' synchronous_commit=' ||
  current_setting('synchronous_commit') || ' shared_buffers=' || current_setting('shared_buffers') ||
  ' ' || split_part(version(), ' on ', 1)")"

step "SQL fingerprint: idem.payload_hash vs sha256(convert_to(doc::text)) over the same documents"
q -c "CREATE TABLE bench_docs (size_class text NOT NULL, raw text NOT NULL, doc jsonb NOT NULL)"
for size in 1k:4096 64k:64; do
  # CSV with quote and delimiter bytes that JSON text never holds: each line arrives verbatim.
  "$BUILD/bench_fingerprint" --emit-doc="${size%:*}" --count="${size#*:}" |
    q -c "CREATE TEMP TABLE stage (raw text)" \
      -c "\\copy stage (raw) FROM pstdin WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')" \
      -c "INSERT INTO bench_docs SELECT '${size%:*}', raw, raw::jsonb FROM stage"
done
q -c "VACUUM ANALYZE bench_docs"
psql "$DBURL" -qX -v ON_ERROR_STOP=1 -v reps="$BENCH_SQL_REPS" -f "$ROOT/bench/sql_fingerprint.sql" |
  tee "$OUT/sql_fingerprint.txt" | grep -v '^\(CREATE\|SELECT\)'

step "store growth: ms per key of the first and last 1,000 of ${BENCH_GROWTH_KEYS} new keys after VACUUM ANALYZE of an empty store"
psql "$DBURL" -qX -v ON_ERROR_STOP=1 -v keys="$BENCH_GROWTH_KEYS" -f "$ROOT/bench/sql_store_growth.sql" |
  tee "$OUT/store_growth.txt" | grep -v '^\(CREATE\|SELECT\|TRUNCATE\|DROP\|VACUUM\|CALL\|SET\)'

step "storage and purge: bytes per record, purge_expired beside a batched DELETE and a partition DROP (${BENCH_STORAGE_KEYS:-100000} records)"
psql "$DBURL" -qX -v ON_ERROR_STOP=1 -v keys="${BENCH_STORAGE_KEYS:-100000}" -f "$ROOT/bench/sql_storage.sql" |
  tee "$OUT/storage.txt" | grep -v '^\(CREATE\|SELECT\|TRUNCATE\|DROP\|VACUUM\|CALL\|SET\|RESET\|UPDATE\|INSERT\)'

step "state machines: check_transition calls per second (bench/sql_state_machines.sql)"
psql "$DBURL" -qX -v ON_ERROR_STOP=1 -f "$ROOT/bench/sql_state_machines.sql" | tee "$OUT/state_machines.txt" | grep -v '^\(CREATE\|SET\|DO\)'

# ---- pgbench ---------------------------------------------------------------------------------

# 99th percentile, in ms, of the per-transaction latencies (3rd field, µs) in pgbench -l logs.
# Under -R pgbench measures from the scheduled start, so queueing behind a slow one counts.
p99_ms() {
  cat "$@" 2>/dev/null | awk '$3 ~ /^[0-9]+$/ { print $3 }' | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
           i = int(NR * 0.99); if (i < NR * 0.99) i++; if (i < 1) i = 1; printf "%.2f", v[i] / 1000 }'
}

# run NAME SCRIPT CLIENTS RATE [pgbench args...]: one pgbench run; RATE "-" for unthrottled.
# Appends "name clients rate tps txns failed avg_ms p99_ms" to $RESULTS and sets TXNS.
run() {
  local name=$1 script=$2 clients=$3 rate=$4
  shift 4
  local tag="${name}-c${clients}" threads=$((clients < 2 ? clients : 2))
  [ "$rate" = - ] || tag+="-R${rate}"
  local args=(-n -M prepared -c "$clients" -j "$threads" -T "$BENCH_SECONDS" -l --log-prefix="$OUT/logs/$tag")
  [ "$rate" = - ] || args+=(-R "$rate")
  q -c "CHECKPOINT" -c "SELECT pg_stat_statements_reset()" -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
  local rc=0 wal_start
  wal_start=$(q -c "SELECT pg_current_wal_lsn()")
  pgbench "${args[@]}" -f "$PGB/$script" "$@" "$DBURL" >"$OUT/$tag.txt" 2>&1 || rc=$?
  local out="$OUT/$tag.txt"
  local tps txns failed avg
  tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$out")
  txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
  avg=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$out")
  if [ "$rc" -ne 0 ] || [ -z "$tps" ] || [ "${failed:-0}" != 0 ] || grep -q 'aborted' "$out"; then
    problems+=("$tag: pgbench exit $rc, failed=${failed:-?}; see $out")
    grep -m5 -i 'error\|abort' "$out" | sed 's/^/   /' || true
  fi
  TXNS=${txns:-0}
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$clients" "$rate" "${tps:--}" "$TXNS" \
    "${failed:-?}" "${avg:--}" "$(p99_ms "$OUT/logs/$tag".*)" >>"$RESULTS"
  q -F ' | ' -c "SELECT calls, round(mean_exec_time::numeric, 3) AS mean_ms, left(regexp_replace(query, '\s+', ' ', 'g'), 90)
          FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         ORDER BY total_exec_time DESC LIMIT 8" >"$OUT/$tag.statements.txt" 2>&1 || true
  # Server execution time per transaction of each step. BEGIN/COMMIT cannot be had this way: under
  # -M prepared, PG 15's pg_stat_statements counts a utility statement once per connection only.
  if [ "$TXNS" -gt 0 ]; then
    q -F $'\t' -v tag="$tag" -v clients="$clients" -v rate="$rate" -v avg="${avg:-0}" -v txns="$TXNS" <<'SQL' >>"$OUT/breakdown.tsv"
SELECT :'tag', :'clients', :'rate', :'avg',
       round((coalesce(sum(total_exec_time) FILTER (WHERE query LIKE '%idem.acquire(%'), 0) / :txns)::numeric, 3),
       round((coalesce(sum(total_exec_time) FILTER (WHERE query LIKE 'INSERT INTO bench_orders%'), 0) / :txns)::numeric, 3),
       round((coalesce(sum(total_exec_time) FILTER (WHERE query LIKE '%idem.complete(%'), 0) / :txns)::numeric, 3)
  FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
SQL
  fi
  # WAL per transaction (all of the server's, so a purge running beside counts too) and the share
  # of it that is full-page images: the first change of a page after a checkpoint logs the page.
  local wal="- - -" wal_bytes wal_fpi wal_records
  if [ "$TXNS" -gt 0 ]; then
    wal=$(q -F ' ' -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal_start') / $TXNS),
                              round(wal_fpi::numeric / $TXNS, 2), round(wal_records::numeric / $TXNS, 1) FROM pg_stat_wal")
  fi
  printf '%s\t%s\n' "$tag" "${wal// /$'\t'}" >>"$OUT/wal.tsv"
  read -r wal_bytes wal_fpi wal_records <<<"$wal"
  printf '   %-24s tps %-10s txns %-7s failed %-3s p99 %s ms  WAL %s B/txn (%s records, %s full pages)\n' "$tag" \
    "${tps:--}" "$TXNS" "${failed:-?}" "$(tail -1 "$RESULTS" | cut -f8)" "$wal_bytes" "$wal_records" "$wal_fpi"
}

# expect WHAT GOT WANT: records a problem when a post-run check does not hold.
expect() {
  if [ "$2" != "$3" ]; then problems+=("$1: got $2, expected $3"); echo "   CHECK FAILED: $1: got $2, expected $3"; fi
}

clear_tables() { q -c "TRUNCATE bench_orders, idem.keys, idem.retired_keys, peer_idempotency_keys, peer_audit_records" >/dev/null; }

# The hand-written peer (peer_setup.sql) under the same business write.
peer_new_key() {
  clear_tables
  run peer_new_key peer_new_key.sql "$@"
  expect "peer_new_key $1 clients: keys = orders = audit rows = transactions" \
    "$(q -c "SELECT (SELECT count(*) FROM peer_idempotency_keys WHERE response_code = 201) || ' ' ||
                    (SELECT count(*) FROM bench_orders) || ' ' || (SELECT count(*) FROM peer_audit_records)")" \
    "$TXNS $TXNS $TXNS"
}

# Fencing tokens issued so far (one global sequence: each acquired or resumed attempt takes one).
tokens_issued() { q -c "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM idem.fencing_token_seq"; }

# The bound on any implementation of the new-key flow: its five statements, the key's two doing nothing.
ceiling_new_key() {
  clear_tables
  run ceiling_new_key ceiling_new_key.sql "$@"
  expect "ceiling_new_key $1 clients: orders written = transactions" "$(q -c "SELECT count(*) FROM bench_orders")" "$TXNS"
}

# The bound on any audited replay: its one write (a row naming the key) and the commit.
ceiling_replay() {
  q -c "TRUNCATE bench_replay_ceiling" >/dev/null
  run ceiling_replay ceiling_replay.sql "$@" -D replay_keys="$BENCH_REPLAY_KEYS"
  expect "ceiling_replay $1 clients: rows written = transactions" "$(q -c "SELECT count(*) FROM bench_replay_ceiling")" "$TXNS"
}

floor() {
  clear_tables
  run floor floor.sql "$@"
  expect "floor $1 clients: orders written = transactions" "$(q -c "SELECT count(*) FROM bench_orders")" "$TXNS"
}

# Updates of idem.keys so far, and how many were HOT (complete's are meant to be).
key_updates() { q -F ' ' -c "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'idem.keys'::regclass"; }

# new_key CLIENTS RATE; NEW_KEY_RUN names the run (new_key_two_writes: idem.pending_record off).
new_key() {
  clear_tables
  local before updates_before updates_after
  before=$(tokens_issued)
  updates_before=$(key_updates)
  run "${NEW_KEY_RUN:-new_key}" new_key.sql "$@"
  sleep 1  # pgbench's backends report their counts as they exit
  updates_after=$(key_updates)
  read -r u0 h0 <<<"$updates_before"
  read -r u1 h1 <<<"$updates_after"
  echo "   ${NEW_KEY_RUN:-new_key}: $((u1 - u0)) updates of idem.keys, $((h1 - h0)) of them HOT" | tee -a "$OUT/hot-updates.txt"
  expect "new_key $1 clients: resolved first-generation keys = transactions" \
    "$(q -c "SELECT count(*) FROM idem.keys WHERE status = 'resolved' AND generation = 1")" "$TXNS"
  expect "new_key $1 clients: one attempt per transaction" $(($(tokens_issued) - before)) "$TXNS"
  expect "new_key $1 clients: all keys = transactions" "$(q -c "SELECT count(*) FROM idem.keys")" "$TXNS"
  expect "new_key $1 clients: orders = transactions" "$(q -c "SELECT count(*) FROM bench_orders")" "$TXNS"
}

replay() {
  local before
  before=$(q -c "SELECT count(*) || ' keys, token sum ' || sum(attempt) FROM idem.keys WHERE status = 'resolved'")
  run replay replay.sql "$@" -D replay_keys="$BENCH_REPLAY_KEYS"
  # A replay writes nothing: the same resolved keys with the same tokens, no order added.
  expect "replay $1 clients: keys unchanged" \
    "$(q -c "SELECT count(*) || ' keys, token sum ' || sum(attempt) FROM idem.keys WHERE status = 'resolved'")" \
    "$before"
  expect "replay $1 clients: orders unchanged" "$(q -c "SELECT count(*) FROM bench_orders")" "$BENCH_REPLAY_KEYS"
}

contended() {
  clear_tables
  q -c "ALTER SEQUENCE bench_outcome_acquired RESTART" -c "ALTER SEQUENCE bench_outcome_replay RESTART" \
    -c "ALTER SEQUENCE bench_outcome_in_progress RESTART" -c "ALTER SEQUENCE bench_outcome_other RESTART" >/dev/null
  local before
  before=$(tokens_issued)
  run contended contended.sql "$@" -D ttl_ms="$BENCH_CONTENTION_TTL_MS"
  local mix
  mix=$(q -F ' ' -c "SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM bench_outcome_acquired),
                            (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM bench_outcome_replay),
                            (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM bench_outcome_in_progress),
                            (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM bench_outcome_other),
                            (SELECT count(*) FROM bench_orders),
                            (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM idem.fencing_token_seq) - $before")
  read -r acquired replayed busy other orders attempts <<<"$mix"
  echo "   outcomes: acquired $acquired, replay $replayed, in_progress $busy, other $other" |
    tee -a "$OUT/contended-mix.txt"
  # nextval is not rolled back: a transaction that failed after acquire would still count.
  expect "contended $1 clients: outcomes counted = transactions" $((acquired + replayed + busy + other)) "$TXNS"
  expect "contended $1 clients: no mismatch/resumed" "$other" 0
  expect "contended $1 clients: orders = acquired" "$orders" "$acquired"
  # An insert that meets a row committed a moment earlier has drawn a token it then does not use:
  # tokens may exceed grants (never the reverse), by at most the in_progress answers.
  expect "contended $1 clients: tokens issued >= acquired" "$((attempts >= acquired))" 1
  expect "contended $1 clients: unused tokens <= in_progress answers" "$((attempts - acquired <= busy))" 1
}

step "pgbench: ${BENCH_SECONDS} s per run, protocol prepared; logs and pg_stat_statements in $OUT"
floor 1 -
floor "$BENCH_CLIENTS" -
new_key 1 -
new_key "$BENCH_CLIENTS" -
# The record written at acquire and updated at complete, as before 0.4.0's pending record.
NEW_KEY_RUN=new_key_two_writes PGOPTIONS="-c idem.pending_record=off" new_key 1 -
NEW_KEY_RUN=new_key_two_writes PGOPTIONS="-c idem.pending_record=off" new_key "$BENCH_CLIENTS" -
peer_new_key 1 -
peer_new_key "$BENCH_CLIENTS" -
ceiling_new_key 1 -
ceiling_new_key "$BENCH_CLIENTS" -
floor "$BENCH_CLIENTS" "$BENCH_RATE"
new_key "$BENCH_CLIENTS" "$BENCH_RATE"
# The same fixed-rate new keys while purge_expired drains BENCH_PURGE_KEYS expired records: as
# fast as one session purges (500 a call), then paced to BENCH_PURGE_RATE records/s in calls of
# BENCH_PURGE_BATCH (what an operator runs beside traffic, docs/sql-api.md, purge_expired).
# purge_under_load NAME RATE BATCH [BARE]: BARE true for the peer, a bare batched DELETE of a copy
# of the same records (bench_purge_all's p_bare).
purge_under_load() {
  local name=$1 rate=$2 batch=$3 bare=${4:-false}
  clear_tables
  q -c "TRUNCATE bench_expired_peer" -c "CALL bench_expired_records(${BENCH_PURGE_KEYS:-300000})" >/dev/null
  if [ "$bare" = true ]; then
    q -c "INSERT INTO bench_expired_peer SELECT * FROM idem.keys WHERE tenant_id = 'aged'" >/dev/null
  fi
  q -c "VACUUM ANALYZE idem.keys" -c "VACUUM ANALYZE bench_expired_peer" >/dev/null
  q -c "CALL bench_purge_all($rate, $batch, $bare)" >"$OUT/$name.txt" 2>&1 &
  local purging=$!
  run "$name" new_key.sql "$BENCH_CLIENTS" "$BENCH_RATE"
  wait "$purging" || problems+=("bench_purge_all($rate, $batch, $bare) failed: $OUT/$name.txt")
  local figures purged purge_s purge_rate
  figures=$(q -F ' ' -c "SELECT records, round(seconds::numeric, 1), round(records / nullif(seconds, 0)) FROM bench_purge_runs ORDER BY ctid DESC LIMIT 1")
  read -r purged purge_s purge_rate <<<"$figures"
  echo "   $name: $purged expired records in $purge_s s ($purge_rate records/s, $batch a call) beside new keys at $BENCH_RATE/s"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$batch" "$purged" "$purge_s" "$purge_rate" >>"$OUT/purge-under-load.tsv"
  expect "$name: every expired record purged" "$purged" "${BENCH_PURGE_KEYS:-300000}"
  expect "$name: new keys kept" "$(q -c "SELECT count(*) FROM idem.keys WHERE tenant_id = 'acme'")" "$TXNS"
}
purge_under_load new_key_purging NULL 500
purge_under_load new_key_purge_paced "$BENCH_PURGE_RATE" "$BENCH_PURGE_BATCH"
# Their peers, the ceiling of any purge: the same records deleted by a bare batched DELETE.
purge_under_load new_key_deleting NULL 500 true
purge_under_load new_key_delete_paced "$BENCH_PURGE_RATE" "$BENCH_PURGE_BATCH" true
clear_tables
echo "   resolving $BENCH_REPLAY_KEYS keys for the replay workload"
q -c "CALL bench_populate_replay($BENCH_REPLAY_KEYS)" -c "CALL peer_populate_replay($BENCH_REPLAY_KEYS)" \
  -c "VACUUM ANALYZE idem.keys" -c "VACUUM ANALYZE peer_idempotency_keys" >/dev/null
replay 1 -
replay "$BENCH_CLIENTS" -
# The replay's hand-written peer, audited like ours (one audit row per replay).
run peer_replay peer_replay.sql 1 - -D replay_keys="$BENCH_REPLAY_KEYS"
run peer_replay peer_replay.sql "$BENCH_CLIENTS" - -D replay_keys="$BENCH_REPLAY_KEYS"
ceiling_replay 1 -
ceiling_replay "$BENCH_CLIENTS" -
# The replay's peer: the same replays with idem.audit_replays off (no audit row).
PGOPTIONS="-c idem.audit_replays=off" run replay_noaudit replay.sql "$BENCH_CLIENTS" - -D replay_keys="$BENCH_REPLAY_KEYS"
# ... and the unaudited replay's: a bare primary-key read of the same stored response.
run pk_read pk_read.sql "$BENCH_CLIENTS" - -D replay_keys="$BENCH_REPLAY_KEYS"
# ... and the same read of a request that carries its payload (built as replay.sql builds it).
run pk_read_payload pk_read_payload.sql "$BENCH_CLIENTS" - -D replay_keys="$BENCH_REPLAY_KEYS"
contended 1 -
contended "$BENCH_CLIENTS" -
# The audit row and the state machine trigger, each beside its peer in this run.
audit_rows() { q -c "SELECT count(*) FROM idem.mutations WHERE outcome = 'completed'"; }
audited_before=$(audit_rows)
q -c "CALL bench_audit_off()" >/dev/null
clear_tables
run new_key_noaudit new_key.sql "$BENCH_CLIENTS" -
q -c "CALL bench_audit_on()" >/dev/null
expect "new_key_noaudit: no audit rows written" "$(audit_rows)" "$audited_before"
clear_tables
run new_key new_key.sql "$BENCH_CLIENTS" -
expect "new_key (audited): one audit row per transaction" $(($(audit_rows) - audited_before)) "$TXNS"
run status_plain status_plain.sql "$BENCH_CLIENTS" -
run status_guarded status_guarded.sql "$BENCH_CLIENTS" -
expect "status_guarded: one log row per update" "$(q -c "SELECT count(*) FROM idem.transition_log WHERE machine = 'bench' AND from_state IS NOT NULL")" "$TXNS"

step "where the time goes: server execution ms per transaction (pg_stat_statements, top level)"
awk -F '\t' '$3 == "-" && ($1 ~ /^(floor|new_key)/) {
    if (!h++) printf "%-14s %7s %8s %8s %9s %9s %10s\n", "run", "avg ms", "acquire", "insert", "complete", "sum", "rest"
    sum = $5 + $6 + $7
    printf "%-14s %7.3f %8.3f %8.3f %9.3f %9.3f %10.3f\n", $1, $4, $5, $6, $7, sum, $4 - sum }' "$OUT/breakdown.tsv"
echo "rest = BEGIN + COMMIT (WAL flush) + round trips + pgbench + waiting for a CPU (more clients than cores)"
echo "WAL per transaction (each run starts after a CHECKPOINT, so first changes of pages log full pages):"
awk -F '\t' '{ printf "  %-30s %14s %15s %16s\n", $1, $2, $3, $4 }' "$OUT/wal.tsv"

# ---- summary ----------------------------------------------------------------------------------
step "summary (BENCH_SECONDS=$BENCH_SECONDS; ratio = tps / floor tps, or p99 / floor p99 at a fixed rate)"
awk -F '\t' '
  { row[NR] = $0; if ($1 == "floor") { if ($3 == "-") ftps[$2] = $4; else fp99[$2 "/" $3] = $8 } }
  END {
    printf "%-10s %7s %6s %10s %9s %8s %8s %9s\n", "workload", "clients", "rate", "tps", "avg ms", "p99 ms", "failed", "vs floor"
    for (i = 1; i <= NR; i++) {
      split(row[i], f, "\t")
      if (f[3] == "-") { base = ftps[f[2]]; ratio = (base > 0 && f[4] != "-") ? sprintf("%.2fx", f[4] / base) : "-" }
      else { base = fp99[f[2] "/" f[3]]; ratio = (base > 0 && f[8] != "-") ? sprintf("%.2fx", f[8] / base) : "-" }
      printf "%-10s %7s %6s %10s %9s %8s %8s %9s\n", f[1], f[2], f[3], (f[4] == "-" ? "-" : sprintf("%.1f", f[4])), f[7], f[8], f[6], ratio
    }
  }' "$RESULTS" | tee "$OUT/summary.txt"
echo "peers: new_key vs peer_new_key and replay vs peer_replay (the hand-written table of bench/pgbench/peer_setup.sql),"
echo "replay vs replay_noaudit (idem.audit_replays off) vs pk_read (a bare primary-key read of the stored response)"
echo "and pk_read_payload (the same read of a request carrying its payload), the bounds ceiling_new_key (new_key's"
echo "five statements with acquire and complete doing nothing) and ceiling_replay (an audited replay's one write),"
echo "new_key vs new_key_two_writes (idem.pending_record off: the record inserted at acquire, updated at complete),"
echo "new_key vs new_key_noaudit (audit append"
echo "swapped for a no-op in the bench database), status_guarded vs status_plain (the trigger + its log row)"
if [ -s "$OUT/contended-mix.txt" ]; then
  echo "contended outcome mix (1 client, then $BENCH_CLIENTS):"
  sed 's/^ */  /' "$OUT/contended-mix.txt"
fi

step "C++ client: idem::Client::run, new keys and replays, beside the bare write through libpqxx (${BENCH_CLIENT_SECONDS:-10} s each)"
build_cmake build-bench bench_client -DIDEM_BENCH=ON -DIDEM_TESTS=OFF
q -c "DROP TABLE IF EXISTS client_orders" -c "TRUNCATE idem.keys" >/dev/null
echo "workload threads requests/s p50_ms p99_ms round_trips/request" | tee "$OUT/client.txt"
for t in 1 8 32; do
  "$BUILD/bench_client" "$DBURL" "$t" "${BENCH_CLIENT_SECONDS:-10}" | tee -a "$OUT/client.txt" ||
    problems+=("bench_client $t threads failed")
done

# The outbox's own benchmarks, with their peers (scripts/bench-outbox.sh), into the same folder.
if [ "${BENCH_OUTBOX:-1}" != 0 ]; then
  step "outbox (scripts/bench-outbox.sh)"
  BENCH_OUTBOX_SKIP_BUILD=0 BENCH_OUT="$OUT" BENCH_SECONDS="$BENCH_SECONDS" BENCH_CLIENTS="$BENCH_CLIENTS" \
    "$ROOT/scripts/bench-outbox.sh" || problems+=("outbox benchmarks: see $OUT/outbox-summary.txt")
fi

echo
echo "results: $OUT ($((SECONDS - started)) s)"
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'PROBLEMS:\n'; printf '  %s\n' "${problems[@]}"
  exit 1
fi
