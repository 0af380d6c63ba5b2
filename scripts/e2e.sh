#!/usr/bin/env bash
# make test's end-to-end suite: the demo stack on its own ports, run dir and database (so a
# `make serve` stays untouched), the demo driver's scenarios plus a planted double charge and
# one of each discrepancy idem.reconcile names (and processor-reconcile run on them), the
# service's HTTP contract test and the processor's. Needs the cluster running and `build/` built.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export STACK_RUN=$ROOT/.run/e2e STACK_DB=idem_e2e SERVICE_PORT=${E2E_SERVICE_PORT:-7410} \
  PROCESSOR_PORT=${E2E_PROCESSOR_PORT:-7411} SERVICE_ARGS=--faults
trap 'scripts/stack.sh down' EXIT
scripts/stack.sh setup
scripts/stack.sh up
rc=0
# A token carries "tenant:caller" and is read back split at the first ':', so a tenant holding a
# ':' would authenticate as another tenant (a token for "acme:globex", caller web, read back as
# tenant acme): minting one must fail.
if scripts/stack.sh token 'acme:globex' web >/dev/null 2>&1; then
  echo "e2e: a token was minted for tenant 'acme:globex'" >&2
  rc=1
else
  echo "e2e_tokens: 1 checks passed"
fi
DB="postgresql://postgres@127.0.0.1:${PGPORT:-54320}/$STACK_DB"
SINCE=$(psql "$DB" -XAtc "SELECT now()")
demo_driver --plant || rc=1
tests/e2e/reconcile_command_test.sh "http://127.0.0.1:$PROCESSOR_PORT" "$DB" "$SINCE" || rc=1
tests/e2e/service_test.sh "http://127.0.0.1:$SERVICE_PORT" "http://127.0.0.1:$PROCESSOR_PORT" \
  "$(scripts/stack.sh token acme web)" || rc=1
tests/e2e/consumer_metrics_test.sh "http://127.0.0.1:$SERVICE_PORT" "$(scripts/stack.sh env | sed -n 's/^CONSUMER_METRICS_URL=//p')" \
  "$(scripts/stack.sh token acme web)" || rc=1
# Last: it resets the processor's data.
tests/e2e/processor_test.sh "http://127.0.0.1:$PROCESSOR_PORT" || rc=1
[ "$rc" -eq 0 ] || echo "e2e: logs in $STACK_RUN/" >&2
exit "$rc"
