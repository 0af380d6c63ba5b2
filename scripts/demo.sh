#!/usr/bin/env bash
# `make demo`: build, start the throwaway cluster, then the main job end to end:
#   part 1, the SQL API by hand (examples/demo.sql): a checkout retried, raced, reused and crashed;
#   part 2, the product: the checkout service, its payment processor and the order consumer on
#   loopback ports, driven with real HTTP requests through every scenario (examples/demo-driver),
#   a table of what each step returned, the operator's forensic queries, and a reconciliation with
#   the processor after one of each discrepancy it must find was planted (examples/reconcile).
# Stops what it started (the stack, and the cluster if it was not running), also on failure or
# Ctrl-C. `make serve` starts the same stack and leaves it running (scripts/serve.sh); the demo's
# stack has its own database, run dir and ports, so a `make serve` stack keeps running beside it:
#   DEMO_DB (idem_demo_http), DEMO_RUN (.run/demo-http), DEMO_SERVICE_PORT (7402),
#   DEMO_PROCESSOR_PORT (7403); part 1's database DEMO_SQL_DB (idem_demo_sql); PGPORT (54320) the
#   cluster's port.
# Refused at once, saying what runs and how to stop it, when those are taken (scripts/stack.sh check).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export STACK_DB=${DEMO_DB:-idem_demo_http} STACK_RUN=${DEMO_RUN:-$ROOT/.run/demo-http} \
  SERVICE_PORT=${DEMO_SERVICE_PORT:-7402} PROCESSOR_PORT=${DEMO_PROCESSOR_PORT:-7403}
export SERVICE_ARGS=--faults  # --faults: the demo may crash the service on purpose
SQL_DB=${DEMO_SQL_DB:-idem_demo_sql}
if ! scripts/stack.sh check; then
  echo "demo: refused: the demo's stack (database $STACK_DB, ports $SERVICE_PORT and $PROCESSOR_PORT, run dir ${STACK_RUN#"$ROOT"/}) would replace what runs there; stop that, or choose others: DEMO_SERVICE_PORT=... DEMO_PROCESSOR_PORT=... DEMO_DB=... make demo" >&2
  exit 1
fi
echo "== building pg_idempotency (extension, client, the demo's three programs)"
build_and_install_extension
build_cmake build "checkout_service payment_processor order_consumer demo_driver processor_reconcile" -DIDEM_BENCH=OFF
echo "== starting the throwaway PostgreSQL 15 cluster (.pg/, port ${PGPORT:-54320})"
pg_up || { echo "demo: no PostgreSQL of this checkout on port ${PGPORT:-54320}; stopping" >&2; exit 1; }
check_installed_extension
URL=$(scripts/pg.sh url)

echo
echo "==== part 1: the SQL API, step by step (examples/demo.sql, database $SQL_DB)"
psql "$URL" -qAtc "DROP DATABASE IF EXISTS $SQL_DB" -c "CREATE DATABASE $SQL_DB" >/dev/null
psql "${URL%/*}/$SQL_DB" -X -q -v ON_ERROR_STOP=1 -f examples/demo.sql

echo
echo "==== part 2: the checkout service, its payment processor and the order consumer (database $STACK_DB, ports $SERVICE_PORT and $PROCESSOR_PORT)"
stack_up
scripts/stack.sh status
echo "driving every scenario with real HTTP requests, then planting what reconciliation must find (about 40 s)..."
rc=0
DB="${URL%/*}/$STACK_DB"
SINCE=$(psql "$DB" -XAtc "SELECT now()")
demo_driver --plant || rc=$?

echo
echo "==== what the operator sees (docs/runbook.md), database $STACK_DB"
q() { echo "-- $1"; psql "$DB" -X -q -P pager=off -c "$2"; }
q "Did we charge twice? (idem.double_charges)" "SELECT * FROM idem.double_charges()"
q "The checkout whose service was killed after the charge: its attempts (the 409s while its lease ran out left out)" \
  "SELECT attempt, outcome, recovery_point, handler_called, handler_response, order_id
     FROM idem.mutations WHERE client_key LIKE 'key-crash%' AND outcome <> 'in_progress' ORDER BY mutation_id"
q "A refunded order's trail (idem.order_trail)" \
  "SELECT at::time(0), source, what, replay FROM idem.order_trail((SELECT order_id FROM orders WHERE status = 'refunded' LIMIT 1))"
q "Charges at the processor, orders, recorded orders" \
  "SELECT (SELECT count(*) FROM processor.charges WHERE status IN ('succeeded', 'requires_action')) AS charges,
          (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM sync_orders) AS sync_orders"
q "The sync plane's lag (idem.outbox_lag)" "SELECT consumer, topic, backlog, dead_letters FROM idem.outbox_lag"
q "One checkout charged under two keys (idem.double_charges_by_resource)" \
  "SELECT resource, client_keys, charge_ids FROM idem.double_charges_by_resource('$SINCE')"
echo "-- Does the processor agree with us? The planted discrepancies, one of each kind (examples/reconcile, idem.reconcile)"
reconcile_rc=0
"$ROOT/build/examples/reconcile/processor-reconcile" --processor "http://127.0.0.1:$PROCESSOR_PORT" --db "$DB" \
  --since "$SINCE" || reconcile_rc=$?
[ "$reconcile_rc" -eq 1 ] || { echo "demo: processor-reconcile exited $reconcile_rc, not 1 (the planted discrepancies)" >&2; rc=1; }

stack_down
if [ "$rc" -ne 0 ]; then
  echo "demo: some steps did not return what they must (marked MISMATCH above); logs in ${STACK_RUN#"$ROOT"/}/" >&2
  exit "$rc"
fi
echo
echo "The databases $SQL_DB and $STACK_DB stay in .pg/ to query; make serve starts a stack of its own (database idem_demo, ports 7400 and 7401) to try by hand."
