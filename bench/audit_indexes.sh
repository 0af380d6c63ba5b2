#!/usr/bin/env bash
# What each index of the audit trail (idem.mutations) costs a new key (issue 24 item 2): one
# database per variant on the throwaway cluster, each grown to GROWN_KEYS records first, then
# bench/pgbench/new_key.sql in each in turn, round after round (ratios against "as_is", the
# indexes as installed), and the WAL per new key right after a CHECKPOINT (bytes and full-page
# images per transaction, 2,000 new keys at one client), beside the hand-written peer's.
#   as_is       the installed indexes
#   no_key      without mutations_key_idx   (tenant_id, client_key, attempted_at): key_history, key_reuse
#   no_order    without mutations_order_idx (order_id) partial: order_trail
#   no_time     without mutations_time_idx  (attempted_at): the windows (recent_mutations, stats,
#               double_charges, reconcile's since) and purge_audit's order
#   no_pkey     without the primary key     (tenant_id, mutation_id)
#   brin_time   no_time and no_pkey, attempted_at as a BRIN instead: two btree indexes left
#   two_writes  the installed indexes, idem.pending_record off: the record inserted at acquire and
#               updated at complete, as before 0.4.0 (issue 24 item 1's figure in a grown store)
# usage: [ROUNDS=3] [SECONDS_EACH=8] [CLIENTS="8 1"] [GROWN_KEYS=100000] [VARIANTS="..."] bench/audit_indexes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} SECONDS_EACH=${SECONDS_EACH:-8} CLIENTS=${CLIENTS-8 1} GROWN_KEYS=${GROWN_KEYS:-100000}
VARIANTS=${VARIANTS:-as_is no_key no_order no_time no_pkey brin_time}
PGB=bench/pgbench
source scripts/lib.sh
build_and_install_extension >/dev/null
pg_up >/dev/null  # started here: stopped on exit; already running: left running
url=$(scripts/pg.sh url)
pgbench=build/pg-install/usr/lib/postgresql/15/bin/pgbench
dbof() { echo "${url%/*}/idem_bench_ix_$1"; }
q() { local db=$1; shift; psql "$(dbof "$db")" -qAtX -v ON_ERROR_STOP=1 "$@"; }

variant_sql() {
  case $1 in
    as_is | peer) ;;
    no_key) echo "DROP INDEX idem.mutations_key_idx;" ;;
    no_order) echo "DROP INDEX idem.mutations_order_idx;" ;;
    no_time) echo "DROP INDEX idem.mutations_time_idx;" ;;
    no_pkey) echo "ALTER TABLE idem.mutations DROP CONSTRAINT mutations_pkey;" ;;
    brin_time) echo "DROP INDEX idem.mutations_time_idx; ALTER TABLE idem.mutations DROP CONSTRAINT mutations_pkey;
                     CREATE INDEX mutations_time_brin ON idem.mutations USING brin (attempted_at);" ;;
    two_writes) echo "DO \$\$ BEGIN EXECUTE format('ALTER DATABASE %I SET idem.pending_record = off', current_database()); END \$\$;" ;;
    *) echo "unknown variant $1" >&2; exit 2 ;;
  esac
}

echo "run $(date -u +%Y%m%d-%H%M%S) at $(git rev-parse --short HEAD): new_key.sql in a store of $GROWN_KEYS records, $SECONDS_EACH s each, $ROUNDS rounds"
for v in $VARIANTS peer; do
  psql "$url" -qAtX -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS idem_bench_ix_$v" \
    -c "CREATE DATABASE idem_bench_ix_$v" >/dev/null
  q "$v" -c "CREATE EXTENSION pg_idempotency" -f "$PGB/setup.sql" >/dev/null
  if [ "$v" = peer ]; then
    q "$v" -f "$PGB/peer_setup.sql" >/dev/null
    grow="SELECT count(*) FROM generate_series(:lo, :hi) g,
            LATERAL (SELECT peer_complete(a.key_id, 'acme', 'grown-key-' || lpad(g::text, 10, '0'), 201, '\x7b7d'::bytea)
                       FROM peer_acquire('acme', 'grown-key-' || lpad(g::text, 10, '0'), bench_payload('cus_1', 1999, g::text)) a) c"
  else
    q "$v" -c "$(variant_sql "$v")" >/dev/null
    grow="SELECT count(*) FROM generate_series(:lo, :hi) g,
            LATERAL (SELECT idem.complete(a.handle, a.attempt, 201, '{}', '\x7b7d'::bytea, 'grown-key-' || lpad(g::text, 10, '0'))
                       FROM idem.acquire('acme', 'grown-key-' || lpad(g::text, 10, '0'), bench_payload('cus_1', 1999, g::text)) a) c"
  fi
  for ((lo = 1; lo <= GROWN_KEYS; lo += 2000)); do  # 2,000 a transaction: each holds its keys' locks
    q "$v" -v lo="$lo" -v hi="$((lo + 1999 < GROWN_KEYS ? lo + 1999 : GROWN_KEYS))" <<<"$grow" >/dev/null
  done
  q "$v" -c "VACUUM ANALYZE" >/dev/null
  [ "$v" = peer ] || printf '%-10s btree indexes on idem.mutations: %s\n' "$v" \
    "$(q "$v" -c "SELECT coalesce(string_agg(indexrelid::regclass::text, ', ' ORDER BY 1), '-') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam WHERE indrelid = 'idem.mutations'::regclass AND am.amname = 'btree'")"
done

script_of() { [ "$1" = peer ] && echo "$PGB/peer_new_key.sql" || echo "$PGB/new_key.sql"; }
tps() {  # tps VARIANT CLIENTS
  local out
  out=$("$pgbench" -n -M prepared -c "$2" -j "$(($2 < 2 ? 1 : 2))" -T "$SECONDS_EACH" -f "$(script_of "$1")" "$(dbof "$1")" 2>&1)
  grep -q "number of failed transactions: 0" <<<"$out" && ! grep -q "aborted" <<<"$out" ||
    { echo "pgbench reported failures" >&2; echo "$out" >&2; exit 1; }
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1
}
wal() {  # wal VARIANT: "bytes full_pages" per new key, 2,000 of them at one client right after a CHECKPOINT
  local before after
  q "$1" -c "CHECKPOINT" -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
  before=$(q "$1" -c "SELECT pg_current_wal_insert_lsn()")
  "$pgbench" -n -M prepared -c 1 -t 2000 -f "$(script_of "$1")" "$(dbof "$1")" >/dev/null 2>&1
  after=$(q "$1" -c "SELECT pg_current_wal_insert_lsn()")
  q "$1" -c "SELECT round(pg_wal_lsn_diff('$after', '$before') / 2000.0) || ' ' || round(wal_fpi / 2000.0, 2) FROM pg_stat_wal"
}

all=($VARIANTS peer)
n=${#all[@]}
for c in $CLIENTS; do
  declare -A ratios=()
  printf '\nclients %s: tps per round (each round starts one variant later: no variant always runs first)\n%-6s' "$c" round
  for v in "${all[@]}"; do printf '%11s' "$v"; done
  echo
  for r in $(seq 1 "$ROUNDS"); do
    declare -A t=()
    for k in $(seq 0 $((n - 1))); do v=${all[$(((k + r - 1) % n))]}; t[$v]=$(tps "$v" "$c"); done
    printf '%-6s' "$r"
    for v in "${all[@]}"; do printf '%11.0f' "${t[$v]}"; done
    echo
    for v in "${all[@]}"; do ratios[$v]="${ratios[$v]:-} $(awk -v a="${t[$v]}" -v b="${t[as_is]}" 'BEGIN { printf "%.3f", a / b }')"; done
    unset t
  done
  printf '%-6s' "median"
  for v in "${all[@]}"; do
    printf '%11s' "$(tr ' ' '\n' <<<"${ratios[$v]}" | grep . | sort -n | awk '{ a[NR] = $1 } END { printf "%.3fx", a[int((NR + 1) / 2)] }')"
  done
  printf '   (each over as_is in its round)\n'
  unset ratios
done

# Where the full-page images of a new key go, by relation: pg_waldump over one WAL turn of as_is.
waldump=build/pg-install/usr/lib/postgresql/15/bin/pg_waldump
fpi_by_relation() {  # VARIANT: "relation full_pages_per_new_key" lines, largest first
  local before after datadir
  datadir=$(q "$1" -c "SHOW data_directory")
  q "$1" -c "CHECKPOINT" >/dev/null
  before=$(q "$1" -c "SELECT pg_current_wal_insert_lsn()")
  "$pgbench" -n -M prepared -c 1 -t 2000 -f "$(script_of "$1")" "$(dbof "$1")" >/dev/null 2>&1
  after=$(q "$1" -c "SELECT pg_current_wal_insert_lsn()")
  q "$1" -c "SELECT pg_switch_wal()" >/dev/null
  "$waldump" -p "$datadir/pg_wal" -s "$before" -e "$after" 2>/dev/null |
    grep -o 'rel [0-9]*/[0-9]*/[0-9]* \(fork [a-z]* \)\?blk [0-9]* FPW' | awk '{ print $2 }' | sort | uniq -c |
    while read -r count rel; do
      name=$(q "$1" -c "SELECT coalesce(pg_filenode_relation(0, ${rel##*/})::text, '${rel}')")
      echo "$name $(awk -v c="$count" 'BEGIN { printf "%.3f", c / 2000 }')"
    done | sort -k2 -rn
}
echo
echo "WAL per new key right after a CHECKPOINT (bytes, full-page images), 2 turns:"
for turn in 1 2; do
  for v in "${all[@]}"; do printf '  turn %s %-10s %s\n' "$turn" "$v" "$(wal "$v")"; done
done
for v in as_is brin_time peer; do
  case " ${all[*]} " in *" $v "*) ;; *) continue ;; esac
  echo "full-page images per new key by relation, $v (pg_waldump):"
  fpi_by_relation "$v" | head -8 | sed 's/^/  /'
done
for v in $VARIANTS; do printf '%-10s audit indexes: %s\n' "$v" "$(q "$v" -c "SELECT pg_size_pretty(pg_indexes_size('idem.mutations'))")"; done
