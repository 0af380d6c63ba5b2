#!/usr/bin/env bash
# End-to-end checks of the demo's payment processor (examples/payment-processor/) over real HTTP:
# charges, replays, key reuse, concurrency, the fault modes, declines, next_action and refunds.
#
#   tests/e2e/processor_test.sh [BASE_URL]     (default $PROCESSOR_URL, else http://127.0.0.1:7401)
#
# Needs a running processor and curl only. It calls POST /_control/reset first, so never point it
# at a processor whose data you want to keep. Keys are unique per run, so it can run again and again.
# Prints "processor_test: N checks passed", or stops at the first failure naming the check.
set -euo pipefail

BASE=${1:-${PROCESSOR_URL:-http://127.0.0.1:7401}}
BASE=${BASE%/}
RUN="$(date +%s%N)-$RANDOM"
TMP=$(mktemp -d /tmp/processor_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CHECKS=0
CHARGE='{"amount_cents":1999,"currency":"usd","source":"tok_visa","description":"order 42",'
CHARGE+='"metadata":{"order":"ord_42"}}'

fail() {
  echo "processor_test: FAILED: $1" >&2
  [ -n "${BODY:-}" ] && echo "  last status: ${STATUS:-} body: $BODY" >&2
  exit 1
}
check() {  # check NAME CONDITION...: counts the check, or fails naming it
  local name=$1
  shift
  if "$@"; then CHECKS=$((CHECKS + 1)); else fail "$name"; fi
}
key() { echo "e2e-$RUN-$1"; }

# call METHOD PATH KEY BODY [curl options...]: sets STATUS and BODY; headers in $TMP/headers,
# exact body bytes in $TMP/body. KEY may be empty (then not sent).
call() {
  local method=$1 path=$2 key=$3 body=$4
  shift 4
  local args=(-s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -X "$method")
  [ -n "$key" ] && args+=(-H "Idempotency-Key: $key")
  # POST always sends a length (Content-Length: 0 when empty): cpp-httplib reads a POST without
  # one until the connection closes.
  [ "$method" = POST ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  : >"$TMP/body"
  STATUS=$(curl "${args[@]}" "$@" "$BASE$path") || STATUS="curl exit $?"
  BODY=$(cat "$TMP/body")
}
keep() { cp "$TMP/body" "$TMP/$1"; }  # keep the last body's exact bytes as $TMP/NAME

field() { grep -o "\"$1\":\"[^\"]*\"" <<<"$BODY" | head -1 | cut -d'"' -f4; }  # first string field
status_is() { [ "$STATUS" = "$1" ]; }
has() { grep -qF -- "$1" <<<"$BODY"; }
replayed() { grep -qi '^Idempotent-Replayed: true' "$TMP/headers"; }
json_type() { grep -qi '^Content-Type: application/json' "$TMP/headers"; }
same_bytes() { cmp -s "$TMP/$1" "$TMP/body"; }
is_charge_id() { [[ "$1" =~ ^ch_[0-9a-f]{24}$ ]]; }
# charges_for KEY: how many charges GET /v1/charges?idempotency_key=KEY lists
charges_for() {
  call GET "/v1/charges?idempotency_key=$1" "" ""
  status_is 200 || fail "GET /v1/charges?idempotency_key=$1 answered $STATUS"
  grep -o '"object":"charge"' <<<"$BODY" | wc -l | tr -d ' '
}
arm() { call POST /_control/faults "" "$1"; check "arm fault $1" status_is 200; }

call GET /health "" ""
check "health answers 200" status_is 200
call POST /_control/reset "" ""
check "reset answers 200" status_is 200

# A charge, its replay, a reuse with other parameters.
K=$(key plain)
call POST /v1/charges "$K" "$CHARGE"
check "charge answers 201" status_is 201
check "charge is JSON" json_type
check "charge succeeded" has '"status":"succeeded"'
ID=$(field id)
check "charge id is ch_ + 24 hex" is_charge_id "$ID"
check "charge is not marked replayed" eval '! replayed'
keep first
call POST /v1/charges "$K" "$CHARGE"
check "same key + same body answers 201 again" status_is 201
check "same key + same body replays identical bytes" same_bytes first
check "replay carries Idempotent-Replayed: true" replayed
check "replay left 1 charge for the key" [ "$(charges_for "$K")" = 1 ]
call POST /v1/charges "$K" '{"amount_cents":5000,"currency":"usd","source":"tok_visa"}'
check "same key + other body answers 400" status_is 400
check "same key + other body is idempotency_key_reused" has '"code":"idempotency_key_reused"'
check "reuse left 1 charge for the key" [ "$(charges_for "$K")" = 1 ]
call GET "/v1/charges/$ID" "" ""
check "GET /v1/charges/{id} finds the charge" has "\"id\":\"$ID\""
call GET /v1/charges/ch_000000000000000000000000 "" ""
check "GET of an unknown charge answers 404" status_is 404

# Requests refused before they execute: not stored under their key.
call POST /v1/charges "" "$CHARGE"
check "no Idempotency-Key answers 400" status_is 400
check "no Idempotency-Key is idempotency_key_missing" has '"code":"idempotency_key_missing"'
K=$(key invalid)
call POST /v1/charges "$K" '{"amount_cents":-5,"currency":"usd","source":"tok_visa"}'
check "negative amount answers 400 invalid_request_error" has '"type":"invalid_request_error"'
call POST /v1/charges "$K" 'not json'
check "a body that is not JSON answers 400" status_is 400
call POST /v1/charges "$K" '{"amount_cents":100,"source":"tok_visa"}'
check "missing currency answers 400 parameter_missing" has '"code":"parameter_missing"'
call POST /v1/charges "$K" "$CHARGE"
check "after 400s the key still charges (they were not stored)" status_is 201
check "that charge is not a replay" eval '! replayed'

# 20 requests at once with one key: exactly one charge, every answer names it.
K=$(key concurrent)
for i in $(seq 1 20); do
  curl -s -o "$TMP/concurrent.body.$i" -w '%{http_code}\n' -X POST -H "Idempotency-Key: $K" \
    -H 'Content-Type: application/json' --data-binary "$CHARGE" "$BASE/v1/charges" >"$TMP/concurrent.status.$i" &
done
wait
check "20 concurrent requests all answer 201" [ "$(cat "$TMP"/concurrent.status.* | sort -u)" = 201 ]
check "20 concurrent requests all answer the same charge" \
  [ "$(grep -ho '"id":"ch_[0-9a-f]*"' "$TMP"/concurrent.body.* | sort -u | wc -l)" = 1 ]
check "20 concurrent requests made exactly 1 charge" [ "$(charges_for "$K")" = 1 ]

# transient: 503 without charging; the retry with the same key charges once.
K=$(key transient)
arm '{"mode":"transient","count":1}'
call POST /v1/charges "$K" "$CHARGE"
check "transient fault answers 503" status_is 503
check "transient fault is processor_unavailable" has '"code":"processor_unavailable"'
check "transient fault sends Retry-After: 1" grep -qi '^Retry-After: 1' "$TMP/headers"
check "transient fault charged nothing" [ "$(charges_for "$K")" = 0 ]
call POST /v1/charges "$K" "$CHARGE"
check "retry after transient answers 201" status_is 201
check "retry after transient is a fresh charge, not a replay" eval '! replayed'
check "retry after transient made 1 charge" [ "$(charges_for "$K")" = 1 ]

# timeout: the charge commits, the caller gives up before the answer; the retry replays it.
K=$(key timeout)
arm '{"mode":"timeout","count":1,"delay_ms":2500}'
call POST /v1/charges "$K" "$CHARGE" --max-time 1
check "timeout fault makes curl --max-time 1 give up (exit 28)" status_is "curl exit 28"
check "the charge behind the timeout exists" [ "$(charges_for "$K")" = 1 ]
call GET "/v1/charges?idempotency_key=$K" "" ""
ID=$(field id)
call POST /v1/charges "$K" "$CHARGE"
check "retry after timeout answers 201" status_is 201
check "retry after timeout replays the same charge" [ "$(field id)" = "$ID" ]
check "retry after timeout is marked replayed" replayed
check "retry after timeout left 1 charge" [ "$(charges_for "$K")" = 1 ]

# slow: the first request holds its key; a second with the same key waits, then replays it.
K=$(key slow)
arm '{"mode":"slow","count":1,"delay_ms":1500}'
curl -s -o "$TMP/slow.first" -X POST -H "Idempotency-Key: $K" --data-binary "$CHARGE" "$BASE/v1/charges" &
SLOW_PID=$!
sleep 0.4
call POST /v1/charges "$K" "$CHARGE"
wait "$SLOW_PID"
check "request behind a slow one answers 201" status_is 201
check "request behind a slow one replays its answer" same_bytes slow.first
check "request behind a slow one is marked replayed" replayed
check "slow + waiting request made 1 charge" [ "$(charges_for "$K")" = 1 ]
call GET /_control/faults "" ""
check "faults are used up" has '"mode":"none"'

# Declines are charges too: recorded as failed, stored under the key, replayed.
K=$(key decline)
call POST /v1/charges "$K" '{"amount_cents":500,"currency":"usd","source":"tok_decline"}'
check "tok_decline answers 402" status_is 402
check "tok_decline is card_error card_declined" has '"type":"card_error","code":"card_declined"'
ID=$(field charge)
check "the decline names its charge" is_charge_id "$ID"
keep decline
call POST /v1/charges "$K" '{"amount_cents":500,"currency":"usd","source":"tok_decline"}'
check "decline replay answers 402 with identical bytes" same_bytes decline
check "decline replay is marked replayed" replayed
call GET "/v1/charges/$ID" "" ""
check "the declined charge is recorded as failed" has '"status":"failed"'

# requires_action: next_action points at authorize, which makes the charge succeed.
K=$(key action)
call POST /v1/charges "$K" '{"amount_cents":700,"currency":"eur","source":"tok_requires_action"}'
check "tok_requires_action answers 201" status_is 201
check "tok_requires_action has status requires_action" has '"status":"requires_action"'
ID=$(field id)
URL=$(field url)
check "next_action redirects to the authorize URL" [ "${URL%%/v1/*}/v1/charges/$ID/authorize" = "$URL" ]
call POST "/v1/charges/$ID/authorize" "" ""
check "authorize answers 200 succeeded" has '"status":"succeeded"'
call POST "/v1/charges/$ID/authorize" "" ""
check "authorize again is harmless" has '"status":"succeeded"'
call GET "/v1/charges/$ID" "" ""
check "the authorized charge reads succeeded" has '"status":"succeeded"'

# Refunds: one, its replay, one too large, an unknown charge.
K=$(key charge-to-refund)
call POST /v1/charges "$K" "$CHARGE"
CHARGE_ID=$(field id)
R=$(key refund)
call POST /v1/refunds "$R" "{\"charge\":\"$CHARGE_ID\",\"amount_cents\":1000}"
check "refund answers 201" status_is 201
check "refund is a re_ object for the charge" has "\"object\":\"refund\",\"charge\":\"$CHARGE_ID\""
keep refund
call POST /v1/refunds "$R" "{\"charge\":\"$CHARGE_ID\",\"amount_cents\":1000}"
check "refund replay has identical bytes" same_bytes refund
check "refund replay is marked replayed" replayed
call POST /v1/refunds "$(key refund-too-large)" "{\"charge\":\"$CHARGE_ID\",\"amount_cents\":1000}"
check "refund beyond the charge answers 400" status_is 400
check "refund beyond the charge is amount_too_large" has '"code":"amount_too_large"'
call POST /v1/refunds "$(key refund-unknown)" '{"charge":"ch_000000000000000000000000","amount_cents":1}'
check "refund of an unknown charge answers 404" status_is 404
call GET "/v1/refunds?charge=$CHARGE_ID" "" ""
check "the charge has exactly 1 refund" [ "$(grep -o '"object":"refund"' <<<"$BODY" | wc -l | tr -d ' ')" = 1 ]
call GET "/v1/charges/$CHARGE_ID" "" ""
check "the charge shows 1000 refunded" has '"amount_refunded_cents":1000'

# The export a reconciliation reads, as Stripe's list API: created_gte, limit, starting_after.
sleep 1  # created is whole seconds: every earlier charge's is below SINCE
SINCE=$(date +%s)
for n in 1 2 3; do call POST /v1/charges "$(key page-$n)" "$CHARGE"; done
call GET "/v1/charges?created_gte=$SINCE" "" ""
check "created_gte lists the charges created since, has_more false without a limit" \
  eval '[ "$(jq ".data | length" <<<"$BODY") $(jq .has_more <<<"$BODY")" = "3 false" ]'
ALL=$(jq -r '.data[].id' <<<"$BODY" | tr '\n' ' ')
call GET "/v1/charges?created_gte=$SINCE&limit=2" "" ""
check "limit=2: the first two, oldest first, has_more true" \
  eval '[ "$(jq -r ".data[].id" <<<"$BODY" | tr "\n" " ")$(jq .has_more <<<"$BODY")" = "$(cut -d" " -f1,2 <<<"$ALL") true" ]'
LAST=$(jq -r '.data[-1].id' <<<"$BODY")
call GET "/v1/charges?created_gte=$SINCE&limit=2&starting_after=$LAST" "" ""
check "starting_after the page's last: the rest, has_more false" \
  eval '[ "$(jq -r ".data[].id" <<<"$BODY") $(jq .has_more <<<"$BODY")" = "$(cut -d" " -f3 <<<"$ALL") false" ]'
call GET "/v1/charges?created_gte=$((SINCE + 3600))" "" ""
check "created_gte in the future lists none" eval '[ "$(jq ".data | length" <<<"$BODY")" = 0 ]'
for bad in "limit=0" "limit=101" "limit=x" "created_gte=-1" "created_gte=1e9"; do
  call GET "/v1/charges?$bad" "" ""
  check "GET /v1/charges?$bad answers 400 naming ${bad%%=*}" eval "status_is 400 && has '\"param\":\"${bad%%=*}\"'"
done
call GET "/v1/charges?starting_after=ch_000000000000000000000000" "" ""
check "starting_after an unknown charge answers 400 resource_missing" eval 'status_is 400 && has "\"code\":\"resource_missing\""'
# Refunds page the same way: two partial refunds of one of those charges, one page at a time.
PAGED=$(cut -d" " -f1 <<<"$ALL")
for n in 1 2; do call POST /v1/refunds "$(key page-refund-$n)" "{\"charge\":\"$PAGED\",\"amount_cents\":100}"; done
call GET "/v1/refunds?created_gte=$SINCE&limit=1" "" ""
check "refunds, limit=1: the older one, has_more true" \
  eval '[ "$(jq ".data | length" <<<"$BODY") $(jq -r ".data[0].charge" <<<"$BODY") $(jq .has_more <<<"$BODY")" = "1 $PAGED true" ]'
FIRST_REFUND=$(jq -r '.data[0].id' <<<"$BODY")
call GET "/v1/refunds?created_gte=$SINCE&limit=1&starting_after=$FIRST_REFUND" "" ""
check "refunds, starting_after the first: the second, has_more false" \
  eval '[ "$(jq ".data | length" <<<"$BODY") $(jq .has_more <<<"$BODY")" = "1 false" ] && [ "$(jq -r ".data[0].id" <<<"$BODY")" != "$FIRST_REFUND" ]'
call GET "/v1/refunds?limit=101" "" ""
check "GET /v1/refunds?limit=101 answers 400 naming limit" eval "status_is 400 && has '\"param\":\"limit\"'"
call GET "/v1/refunds?starting_after=re_000000000000000000000000" "" ""
check "starting_after an unknown refund answers 400 resource_missing" eval 'status_is 400 && has "\"code\":\"resource_missing\""'

# HTTP edges: JSON 404 for unknown routes, 413 over 1 MiB.
call GET /v1/nothing "" ""
check "an unknown route answers 404 JSON" eval 'status_is 404 && json_type'
head -c 1100000 /dev/zero | tr '\0' ' ' >"$TMP/big"
call POST /v1/charges "$(key big)" "@$TMP/big"
check "a body over 1 MiB answers 413" status_is 413

echo "processor_test: $CHECKS checks passed"
