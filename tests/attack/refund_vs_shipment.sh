#!/usr/bin/env bash
# A full refund races a shipment: the service checks the order's state, the processor refunds
# (slow, 1 s), the order ships meanwhile, and complete's UPDATE status = 'refunded' is refused by
# the order machine. The money went back to the buyer; the key then answers (and stores) a
# refusal, and no refunds row exists. Exits 1 while the defect exists.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
T=$(tok acme web)
r=$(post "/checkout/$(uniq_id cs)/complete" "$(uniq_id key-ship-checkout)" "$(checkout_body 2500)" "$T")
pay=$(echo "${r#* }" | jq -r .payment_id); oid=$(echo "${r#* }" | jq -r .order_id); ch=$(echo "${r#* }" | jq -r .charge_id)
key=$(uniq_id key-refund-vs-ship)
body='{"amount_cents":2500,"currency":"usd","reason":"race"}'
fault '{"mode":"slow","count":1,"delay_ms":1000}'
post "/v1/payments/$pay/refunds" "$key" "$body" "$T" > /tmp/rs.$$ &
sleep 0.4
echo "ship: $(q "UPDATE orders SET status = 'shipped' WHERE order_id = '$oid' RETURNING status")"
wait
echo "first answer:  $(cut -c1-150 /tmp/rs.$$)"; rm -f /tmp/rs.$$
sleep 2.5   # the lease (2 s) runs out
echo "retry answer:  $(post "/v1/payments/$pay/refunds" "$key" "$body" "$T" | cut -c1-150)"
echo "retry again:   $(post "/v1/payments/$pay/refunds" "$key" "$body" "$T" | cut -c1-150)"
proc=$(q "SELECT amount_refunded_cents FROM processor.charges WHERE id = '$ch'")
local_rows=$(q "SELECT count(*) FROM refunds WHERE payment_id = '$pay'")
local_cents=$(q "SELECT refunded_cents FROM orders WHERE order_id = '$oid'")
echo "processor refunded $proc cents; local refunds rows $local_rows, orders.refunded_cents $local_cents"
[ "$proc" -gt 0 ] && [ "$local_rows" = 0 ] && defect "processor refunded $proc cents, the service recorded none and answers a refusal"
exit $fail
