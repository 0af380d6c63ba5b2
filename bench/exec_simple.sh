#!/usr/bin/env bash
# Issue 24 item 3: the audit row as the extension writes it on one node since 0.4.0 (idem._audit,
# what every path's audit append runs: ExecSimpleRelationInsert on an EState made per row, as the
# logical-replication apply worker writes one) beside the same call through the kept SPI plan it
# used before (forced, in a transaction rolled back afterwards, by a column of idem.mutations the
# direct write does not fill), and beside one INSERT ... SELECT of as many rows (one executor for
# all: a floor, not a per-call path). N rows per turn, in alternating turns; prints server
# microseconds per row. usage: [N=20000] [TURNS=5] bench/exec_simple.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20000} TURNS=${TURNS:-5}
source scripts/lib.sh
build_and_install_extension >/dev/null
pg_up >/dev/null  # started here: stopped on exit; already running: left running
url=$(scripts/pg.sh url)
db="${url%/*}/idem_bench_exec_simple"
psql "$url" -qAtX -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS idem_bench_exec_simple" \
  -c "CREATE DATABASE idem_bench_exec_simple" >/dev/null
psql "$db" -qAtX -v ON_ERROR_STOP=1 <<SQL >/dev/null
CREATE EXTENSION pg_idempotency;
-- The template: the completed row of one real new key.
SELECT idem.complete(a.handle, a.attempt, 201, '{}', '\x7b7d'::bytea, 'ord-exec-simple-1', '{"charge_id":"ch_1"}')
  FROM idem.acquire('acme', 'exec-simple-template-key', '{"amount_cents":1999}'::jsonb) a;
SQL
# Kept apart: a lookup in the growing trail per row would be what this measured.
psql "$db" -qAtX -c "CREATE TABLE template AS SELECT * FROM idem.mutations ORDER BY mutation_id DESC LIMIT 1" >/dev/null
before=$(psql "$db" -qAtX -c "SELECT count(*) FROM idem.mutations")
args="t.tenant_id, t.scope_digest, t.client_key, t.caller_id, t.resource, t.generation, t.attempt, t.mutation_type, t.outcome,
      t.handler_called, t.order_id || '-' || g, t.handler_response, t.local_status, t.error_message, t.recovery_point, t.retry_count,
      t.attempted_at, t.completed_at"
per_row() {  # per_row WAY: server us per row of N
  local sql
  case $1 in
    # Each row's order id names its g: the call is made once per row, not once for the template.
    simple) sql="SELECT count(*) FROM generate_series(1, $N) g, LATERAL (SELECT idem._audit($args) FROM template t) a" ;;
    spi) sql="SELECT count(*) FROM generate_series(1, $N) g, LATERAL (SELECT idem._audit($args) FROM template t) a" ;;
    bulk) sql="INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, generation, attempt, mutation_type,
                 outcome, handler_called, order_id, handler_response, local_status, error_message, recovery_point, retry_count,
                 attempted_at, completed_at) SELECT $args FROM generate_series(1, $N) g, template t" ;;
  esac
  psql "$db" -qAtX -v ON_ERROR_STOP=1 <<SQL
$([ "$1" = spi ] && echo "BEGIN; ALTER TABLE idem.mutations ADD COLUMN bench_spi_way text;")
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$sql \g /dev/null
SELECT round((extract(epoch FROM clock_timestamp()) - :t0) * 1e6 / $N, 2);
$([ "$1" = spi ] && echo "ROLLBACK;")
SQL
}
echo "run $(date -u +%Y%m%d-%H%M%S) at $(git rev-parse --short HEAD): server us per audit row, $N rows a turn, $TURNS turns"
declare -A figures=()
ways=(spi simple bulk)
for t in $(seq 1 "$TURNS"); do
  for k in 0 1 2; do w=${ways[$(((k + t - 1) % 3))]}; figures[$w]="${figures[$w]:-} $(per_row "$w")"; done
done
for w in "${ways[@]}"; do
  printf '%-7s %s  (median %s)\n' "$w" "${figures[$w]}" "$(tr ' ' '\n' <<<"${figures[$w]}" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
done
# The rows are the same rows: each way kept wrote N per turn (each through the invariants
# trigger), alike but for the order id, and each drew its own mutation_id; the spi way's turns
# were rolled back.
psql "$db" -qAtX -c "SELECT 'rows written: ' || count(*) || ' (expected ' || (2 * $TURNS * $N + $before) || '), distinct but for the order id: ' ||
  count(DISTINCT (tenant_id, scope_digest, client_key, outcome, handler_response::text, attempted_at)) || ', distinct ids: ' ||
  count(DISTINCT mutation_id) FROM idem.mutations"
