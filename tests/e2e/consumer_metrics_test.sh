#!/usr/bin/env bash
# The order consumer's GET /metrics moves with what it applies: one more checkout is one more
# event applied, none skipped or failed, and the backlog back to 0.
#   tests/e2e/consumer_metrics_test.sh SERVICE_URL CONSUMER_METRICS_URL TOKEN
set -euo pipefail
SERVICE=${1:?service URL}
METRICS_URL=${2:?the consumer metrics URL}
TOKEN=${3:?bearer token}
# shellcheck source=tests/e2e/metrics_lib.sh
source "$(dirname "$0")/metrics_lib.sh"
CHECKS=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then CHECKS=$((CHECKS + 1)); else echo "consumer_metrics_test: FAILED: $name" >&2; exit 1; fi
}
check "the consumer's metrics answer in Prometheus text" eval \
  'grep -qx "# TYPE order_consumer_events_applied_total counter" <<<"$(curl -s "$METRICS_URL")"'
check "nothing is left behind before the checkout" metric_is order_consumer_backlog_events 0
applied=$(metric order_consumer_events_applied_total)
skipped=$(metric order_consumer_redeliveries_skipped_total)
failed=$(metric order_consumer_events_failed_total)
RUN="$(date +%s%N)"
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: consumer-metrics-$RUN" --data-binary '{"amount_cents":777,"currency":"usd","payment_method":"tok_visa"}' \
  "$SERVICE/checkout/cs_consumer_metrics_$RUN/complete")
check "a checkout answers 201" [ "$status" = 201 ]
check "one more event applied" metric_is order_consumer_events_applied_total $((applied + 1))
check "none skipped as a redelivery" metric_is order_consumer_redeliveries_skipped_total "$skipped"
check "none failed" metric_is order_consumer_events_failed_total "$failed"
check "the backlog is 0 again" metric_is order_consumer_backlog_events 0
echo "consumer_metrics_test: $CHECKS checks passed"
