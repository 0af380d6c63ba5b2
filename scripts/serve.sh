#!/usr/bin/env bash
# `make serve`: build, start the throwaway cluster and the demo stack (checkout service, payment
# processor, order consumer) on loopback, and leave them running; prints what to try by hand.
#   SERVICE_PORT (7400), PROCESSOR_PORT (7401), PGPORT (54320); STACK_DB (idem_demo) and STACK_RUN
#   (.run/demo: pids, logs, the token secret) as in scripts/stack.sh.
# A stack of this run dir that already runs is left as it is (its database and token secret
# too); ports or a database another stack uses are refused (scripts/stack.sh check).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export STACK_DB=${STACK_DB:-idem_demo} STACK_RUN=${STACK_RUN:-$ROOT/.run/demo}
SERVICE_PORT=${SERVICE_PORT:-7400} PROCESSOR_PORT=${PROCESSOR_PORT:-7401}
export SERVICE_PORT PROCESSOR_PORT
running=$(scripts/stack.sh status | grep -c ': running' || true)
if [ "$running" = 0 ] && ! scripts/stack.sh check; then
  echo "serve: refused; other ports: SERVICE_PORT=... PROCESSOR_PORT=... make serve" >&2
  exit 1
fi
build_and_install_extension
build_cmake build "checkout_service payment_processor order_consumer demo_driver processor_reconcile" -DIDEM_BENCH=OFF
pg_up || { echo "serve: no PostgreSQL of this checkout on port ${PGPORT:-54320}" >&2; exit 1; }
check_installed_extension
if [ "$running" = 3 ]; then
  echo "serve: the stack in ${STACK_RUN#"$ROOT"/} already runs: left as it is, with its database and token secret (restart it: scripts/stack.sh down && make serve)"
elif [ "$running" != 0 ]; then
  echo "serve: part of the stack in ${STACK_RUN#"$ROOT"/} runs ($(scripts/stack.sh status | tr '\n' ' ')); stop it with scripts/stack.sh down, then make serve" >&2
  exit 1
elif ! stack_up; then
  echo "serve: the stack did not come up; logs in ${STACK_RUN#"$ROOT"/}/" >&2
  exit 1
fi
# Started to stay: nothing is stopped when this script ends.
BEFORE_PG_DOWN="" PG_STARTED_HERE=0
trap - EXIT INT TERM
TOKEN=$(scripts/stack.sh token acme web)
# The commands printed below name a run dir other than the default one.
AT=""
[ "$STACK_RUN" = "$ROOT/.run/demo" ] || AT="STACK_RUN=$STACK_RUN "
DB="postgresql://postgres@127.0.0.1:${PGPORT:-54320}/$STACK_DB"
cat <<TXT

The demo stack is running (logs and pids in ${STACK_RUN#"$ROOT"/}/):
  checkout service   http://127.0.0.1:$SERVICE_PORT
  its metrics        http://127.0.0.1:$SERVICE_PORT/metrics   (Prometheus text format)
  payment processor  http://127.0.0.1:$PROCESSOR_PORT   (its charges: GET /v1/charges)
  order consumer     claims order_intent from the outbox into sync_orders
  its metrics        $(scripts/stack.sh env | sed -n 's/^CONSUMER_METRICS_URL=//p')

Try (docs/demo.md has more):
  TOKEN=$TOKEN
  curl -i -X POST http://127.0.0.1:$SERVICE_PORT/checkout/cs_1/complete \\
       -H "Authorization: Bearer \$TOKEN" -H 'Idempotency-Key: 3f0e8a8e-6d3b-4c1a-9d9e-2b7f4c1e5a01' \\
       -d '{"amount_cents":1999,"currency":"usd","payment_method":"tok_visa"}'
  # run it again: the same bytes, with Idempotent-Replayed: true; change the amount: 422
  curl -s http://127.0.0.1:$PROCESSOR_PORT/v1/charges
  psql $DB -c 'SELECT * FROM idem.double_charges()'
  psql $DB -c "SELECT * FROM idem.key_history('acme', '3f0e8a8e-6d3b-4c1a-9d9e-2b7f4c1e5a01')"
  psql $DB -c 'SELECT order_id, status, charge_id FROM orders' -c 'SELECT order_id, event_id FROM sync_orders'
  ${AT}scripts/stack.sh token <tenant> <caller>      # another caller's token

Stop: ${AT}scripts/stack.sh down && scripts/pg.sh stop
TXT
