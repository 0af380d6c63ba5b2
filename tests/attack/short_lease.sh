#!/usr/bin/env bash
# Holder slower than its lease: the service runs with --lease-ms 500 (restarted by this script,
# put back to SERVICE_ARGS at the end) and the processor holds each call 1.5 s; a second and a
# third session with the same key arrive while the first is still inside the processor call.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
saved=$SERVICE_ARGS
"$ROOT/scripts/stack.sh" stop service; SERVICE_ARGS="--faults --lease-ms 500" "$ROOT/scripts/stack.sh" start service >/dev/null
T=$(tok acme web)
S=$(uniq_id cs); K=$(uniq_id key-short); B=$(checkout_body 4200)
fault '{"mode":"slow","count":3,"delay_ms":1500}'
post "/checkout/$S/complete" "$K" "$B" "$T" > /tmp/sh.$$.a &
sleep 0.7; post "/checkout/$S/complete" "$K" "$B" "$T" > /tmp/sh.$$.b &
sleep 0.6; post "/checkout/$S/complete" "$K" "$B" "$T" > /tmp/sh.$$.c &
wait; for f in a b c; do echo "checkout $f: $(cut -c1-90 /tmp/sh.$$.$f)"; done
r=$(post "/checkout/$S/complete" "$K" "$B" "$T"); echo "after: $(echo "$r" | cut -c1-60)"
n=$(q "SELECT count(*) FROM processor.charges WHERE metadata->>'session_id'='$S'"); o=$(q "SELECT count(*) FROM orders WHERE session_id='$S'")
[ "$n" = 1 ] && [ "$o" = 1 ] && ok "checkout: 1 charge 1 order" || defect "checkout: $n charges $o orders"
pay=$(echo "${r#* }" | jq -r .payment_id); oid=$(echo "${r#* }" | jq -r .order_id)
K=$(uniq_id key-short-refund); B='{"amount_cents":4200,"currency":"usd","reason":"slow"}'
fault '{"mode":"slow","count":3,"delay_ms":1500}'
post "/v1/payments/$pay/refunds" "$K" "$B" "$T" > /tmp/sh.$$.a &
sleep 0.7; post "/v1/payments/$pay/refunds" "$K" "$B" "$T" > /tmp/sh.$$.b &
sleep 0.6; post "/v1/payments/$pay/refunds" "$K" "$B" "$T" > /tmp/sh.$$.c &
wait; for f in a b c; do echo "refund $f: $(cut -c1-90 /tmp/sh.$$.$f)"; done; rm -f /tmp/sh.$$.*
for i in 1 2 3 4; do r=$(post "/v1/payments/$pay/refunds" "$K" "$B" "$T"); [ "${r%% *}" = 201 ] && break; sleep 0.5; done
echo "after: $(echo "$r" | cut -c1-60)"
row=$(q "SELECT status, refunded_cents, (SELECT count(*) FROM refunds WHERE payment_id='$pay') FROM orders WHERE order_id='$oid'")
[ "$row" = "refunded|4200|1" ] && ok "refund: once" || defect "refund: $row"
"$ROOT/scripts/stack.sh" stop service; SERVICE_ARGS=$saved "$ROOT/scripts/stack.sh" start service >/dev/null
exit $fail
