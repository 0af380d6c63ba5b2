#!/usr/bin/env bash
# SIGKILL the service while the processor is refunding (slow), and the consumer mid-batch.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
T=$(tok acme web)
# 1. refund: the service dies during the processor call; the processor finishes the refund
r=$(post "/checkout/$(uniq_id cs)/complete" "$(uniq_id key-kr-checkout)" "$(checkout_body 3000)" "$T")
pay=$(echo "${r#* }" | jq -r .payment_id); oid=$(echo "${r#* }" | jq -r .order_id); ch=$(echo "${r#* }" | jq -r .charge_id)
K=$(uniq_id key-kill-refund); B='{"amount_cents":3000,"currency":"usd","reason":"kill"}'
fault '{"mode":"slow","count":1,"delay_ms":800}'
post "/v1/payments/$pay/refunds" "$K" "$B" "$T" >/dev/null 2>&1 &
sleep 0.3; "$ROOT/scripts/stack.sh" kill service; wait
"$ROOT/scripts/stack.sh" start service >/dev/null
# another key tries to refund meanwhile (local check still sees 3000 refundable)
echo "other key: $(post "/v1/payments/$pay/refunds" "$(uniq_id key-kill-other)" "$B" "$T" | cut -c1-120)"
for i in $(seq 1 10); do r1=$(post "/v1/payments/$pay/refunds" "$K" "$B" "$T"); [ "${r1%% *}" != 409 ] && break; sleep 0.5; done
r2=$(post "/v1/payments/$pay/refunds" "$K" "$B" "$T")
echo "resume: $(echo "$r1" | cut -c1-80)"
[ "$r1" = "$r2" ] && ok "refund replay identical" || defect "refund replay differs"
row=$(q "SELECT status, refunded_cents FROM orders WHERE order_id='$oid'"); pr=$(q "SELECT count(*), sum(amount_cents) FROM processor.refunds WHERE charge_id='$ch'")
echo "order: $row; processor refunds: $pr"
[ "$row" = "refunded|3000" ] && [ "$pr" = "1|3000" ] && ok "one refund" || defect "refund state $row / $pr"
[ "$(q "SELECT count(*) FROM refunds WHERE payment_id='$pay'")" = 1 ] || defect "refunds rows != 1"
# 2. consumer killed mid-batch, twice
"$ROOT/scripts/stack.sh" stop consumer
CONSUMER_ARGS="--apply-delay-ms 150" "$ROOT/scripts/stack.sh" start consumer >/dev/null
before=$(q "SELECT count(*) FROM orders")
for i in $(seq 1 12); do post "/checkout/$(uniq_id cs)/complete" "$(uniq_id key-cons)" "$(checkout_body $((100+i)))" "$T" >/dev/null & done; wait
sleep 0.5; "$ROOT/scripts/stack.sh" kill consumer
CONSUMER_ARGS="--apply-delay-ms 150" "$ROOT/scripts/stack.sh" start consumer >/dev/null; sleep 0.7; "$ROOT/scripts/stack.sh" kill consumer
"$ROOT/scripts/stack.sh" start consumer >/dev/null
for i in $(seq 1 100); do
  missing=$(q "SELECT count(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM sync_orders s WHERE s.order_id = o.order_id)")
  [ "$missing" = 0 ] && break; sleep 0.5
done
[ "$missing" = 0 ] && ok "every order reached sync_orders" || defect "$missing orders missing from sync_orders"
extra=$(q "SELECT count(*) FROM sync_orders s WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.order_id = s.order_id)")
[ "$extra" = 0 ] || defect "$extra sync_orders without an order"
echo "sync_order_mutations per order (max): $(q "SELECT max(c) FROM (SELECT count(*) c FROM sync_order_mutations GROUP BY order_id) x")"
echo "order.created events per order (max): $(q "SELECT max(c) FROM (SELECT count(*) c FROM idem.outbox_events WHERE topic = 'order.created' GROUP BY payload->>'order_id') x" 2>&1)"
exit $fail
