#!/usr/bin/env bash
# Three refunds of one 3000-cent payment under different keys at once, 2000 each (slow processor,
# so all pass the service's local refundable check). Expect one 201, the rest refused; local and
# processor totals equal and <= 3000.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
T=$(tok acme web)
r=$(post "/checkout/$(uniq_id cs)/complete" "$(uniq_id key-od-checkout)" "$(checkout_body 3000)" "$T")
pay=$(echo "${r#* }" | jq -r .payment_id); oid=$(echo "${r#* }" | jq -r .order_id); ch=$(echo "${r#* }" | jq -r .charge_id)
fault '{"mode":"slow","count":3,"delay_ms":700}'
for i in 1 2 3; do post "/v1/payments/$pay/refunds" "$(uniq_id key-od-$i)" '{"amount_cents":2000,"currency":"usd","reason":"od"}' "$T" > /tmp/od.$$.$i & done; wait
cut -c1-90 /tmp/od.$$.*; n201=$(grep -l '^201' /tmp/od.$$.* | wc -l); rm -f /tmp/od.$$.*
loc=$(q "SELECT refunded_cents FROM orders WHERE order_id='$oid'"); pro=$(q "SELECT amount_refunded_cents FROM processor.charges WHERE id='$ch'")
echo "201s: $n201; local $loc; processor $pro"
[ "$n201" = 1 ] && [ "$loc" = 2000 ] && [ "$pro" = 2000 ] && ok "no overdraw" || defect "overdraw or mismatch"
exit $fail
