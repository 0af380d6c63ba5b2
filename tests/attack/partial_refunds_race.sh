#!/usr/bin/env bash
# Two partial refunds of one payment under different keys, concurrently, adding up to the whole
# payment. Each computes `full` from the refundable amount it read before the processor call, so
# neither sets status = 'refunded': the order stays 'confirmed' (shippable) with nothing left.
# Exits 1 while the defect exists.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
T=$(tok acme web)
r=$(post "/checkout/$(uniq_id cs)/complete" "$(uniq_id key-partial-checkout)" "$(checkout_body 1000)" "$T")
pay=$(echo "${r#* }" | jq -r .payment_id); oid=$(echo "${r#* }" | jq -r .order_id)
# slow: the processor holds each refund 1 s under its key lock, so both pass the local check first
fault '{"mode":"slow","count":2,"delay_ms":1000}'
post "/v1/payments/$pay/refunds" "$(uniq_id key-partial-a)" '{"amount_cents":600,"currency":"usd","reason":"a"}' "$T" > /tmp/pr_a.$$ &
post "/v1/payments/$pay/refunds" "$(uniq_id key-partial-b)" '{"amount_cents":400,"currency":"usd","reason":"b"}' "$T" > /tmp/pr_b.$$ &
wait
cut -c1-60 /tmp/pr_a.$$ /tmp/pr_b.$$; rm -f /tmp/pr_a.$$ /tmp/pr_b.$$
row=$(q "SELECT status, refunded_cents, amount_cents FROM orders WHERE order_id = '$oid'")
echo "order $oid: $row"
[ "${row#*|}" = "1000|1000" ] || { echo "refunds did not both succeed; inconclusive"; exit 2; }
if [ "${row%%|*}" != refunded ]; then
  defect "fully refunded order is '${row%%|*}'"
  shipped=$(q "UPDATE orders SET status = 'shipped' WHERE order_id = '$oid' RETURNING status" 2>&1)
  [ "$shipped" = shipped ] && defect "and it can still ship after a 100% refund"
else ok "status refunded"; fi
exit $fail
