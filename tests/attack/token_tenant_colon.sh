#!/usr/bin/env bash
# A token minted for tenant "acme:globex" (caller "web") authenticates as tenant "acme", caller
# "globex:web": mint_token joins tenant:caller without refusing ':' in the tenant, and
# verify_bearer splits at the first ':'. It then refunds acme's payment. Exits 1 while so.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
r=$(post "/checkout/$(uniq_id cs)/complete" "$(uniq_id key-colon-checkout)" "$(checkout_body 800)" "$(tok acme web)")
pay=$(echo "${r#* }" | jq -r .payment_id)
tc=$(tok acme:globex web) || { ok "minting refused"; exit 0; }
r=$(post "/v1/payments/$pay/refunds" "$(uniq_id key-colon)" '{"amount_cents":100,"currency":"usd","reason":"x"}' "$tc")
echo "$r" | cut -c1-80
[ "${r%% *}" = 201 ] && defect "token for tenant 'acme:globex' refunded tenant acme's payment"
exit $fail
