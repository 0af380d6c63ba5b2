#!/usr/bin/env bash
# `make serve`: build, start the throwaway cluster and the demo stack (checkout service, payment
# processor, order consumer) on loopback, and leave them running; prints what to try by hand.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
build_and_install_extension
build_cmake build "checkout_service payment_processor order_consumer demo_driver" -DIDEM_BENCH=OFF
pg_up || { echo "serve: no PostgreSQL of this checkout on port ${PGPORT:-54320}" >&2; exit 1; }
check_installed_extension
export STACK_DB=idem_demo
if ! stack_up; then
  echo "serve: the stack did not come up; logs in .run/demo/" >&2
  exit 1
fi
# Started to stay: nothing is stopped when this script ends.
BEFORE_PG_DOWN="" PG_STARTED_HERE=0
trap - EXIT INT TERM
TOKEN=$(scripts/stack.sh token acme web)
DB="postgresql://postgres@127.0.0.1:${PGPORT:-54320}/$STACK_DB"
cat <<TXT

The demo stack is running (logs and pids in .run/demo/):
  checkout service   http://127.0.0.1:${SERVICE_PORT:-7400}
  payment processor  http://127.0.0.1:${PROCESSOR_PORT:-7401}   (its charges: GET /v1/charges)
  order consumer     claims order_intent from the outbox into sync_orders

Try (docs/demo.md has more):
  TOKEN=$TOKEN
  curl -i -X POST http://127.0.0.1:${SERVICE_PORT:-7400}/checkout/cs_1/complete \\
       -H "Authorization: Bearer \$TOKEN" -H 'Idempotency-Key: 3f0e8a8e-6d3b-4c1a-9d9e-2b7f4c1e5a01' \\
       -d '{"amount_cents":1999,"currency":"usd","payment_method":"tok_visa"}'
  # run it again: the same bytes, with Idempotent-Replayed: true; change the amount: 422
  curl -s http://127.0.0.1:${PROCESSOR_PORT:-7401}/v1/charges
  psql $DB -c 'SELECT * FROM idem.double_charges()'
  psql $DB -c "SELECT * FROM idem.key_history('acme', '3f0e8a8e-6d3b-4c1a-9d9e-2b7f4c1e5a01')"
  psql $DB -c 'SELECT order_id, status, charge_id FROM orders' -c 'SELECT order_id, event_id FROM sync_orders'
  scripts/stack.sh token <tenant> <caller>      # another caller's token

Stop: scripts/stack.sh down && scripts/pg.sh stop
TXT
