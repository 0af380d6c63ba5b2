#!/usr/bin/env bash
# shellcheck disable=SC2016  # check NAME eval '...': expanded when the check runs, on purpose
# End-to-end checks of the checkout service's HTTP contract (examples/checkout-service/) over real
# HTTP: the Idempotency-Key header as an RFC 8941 String (quoted and bare: one key, one charge;
# lists, parameters, two lines, bad escapes, non-ASCII refused, nothing charged), keys of 255
# characters, problem+json for what cpp-httplib answers itself (404, 405 + Allow, 413), the
# "stored" member of both kinds of 400, and the 503/504 details of a failing processor.
#
#   tests/e2e/service_test.sh SERVICE_URL PROCESSOR_URL TOKEN
#
# TOKEN: a bearer token of the service (scripts/stack.sh token acme web). Needs the stack running
# with the processor's fault control (it arms two faults) and curl. Keys and sessions are unique
# per run, so it can run again and again. Prints "service_test: N checks passed", or stops at the
# first failure naming the check.
set -euo pipefail

SERVICE=${1:?service URL}
PROCESSOR=${2:?processor URL}
TOKEN=${3:?bearer token}
SERVICE=${SERVICE%/}
PROCESSOR=${PROCESSOR%/}
RUN="$(date +%s%N)-$RANDOM"
TMP=$(mktemp -d /tmp/service_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CHECKS=0
TYPE=urn:pg-idempotency:error:

fail() {
  echo "service_test: FAILED: $1" >&2
  [ -n "${STATUS:-}" ] && echo "  last status: $STATUS body: ${BODY:-}" >&2
  exit 1
}
check() {  # check NAME CONDITION...: counts the check, or fails naming it
  local name=$1
  shift
  if "$@"; then CHECKS=$((CHECKS + 1)); else fail "$name"; fi
}
key() { echo "svc-e2e-$RUN-$1"; }
session() { local name=${1//[^A-Za-z0-9]/_}; echo "cs_e2e_${RUN//-/_}_$name"; }  # the route takes [A-Za-z0-9_-]{1,64}
checkout_body() { echo "{\"amount_cents\":$1,\"currency\":\"usd\",\"payment_method\":\"tok_visa\"}"; }

# call METHOD PATH BODY [curl options...]: sets STATUS and BODY; headers in $TMP/headers, exact
# body bytes in $TMP/body. Sends the bearer token; Idempotency-Key lines come as curl options.
call() {
  local method=$1 path=$2 body=$3
  shift 3
  local args=(-s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $TOKEN")
  # A POST always sends a length: cpp-httplib reads a POST without one until the connection closes.
  [ "$method" = POST ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  : >"$TMP/body"
  STATUS=$(curl "${args[@]}" "$@" "$SERVICE$path") || STATUS="curl exit $?"
  BODY=$(cat "$TMP/body")
}
keep() { cp "$TMP/body" "$TMP/$1"; }  # keep the last body's exact bytes as $TMP/NAME
same_bytes() { cmp -s "$TMP/$1" "$TMP/body"; }
status_is() { [ "$STATUS" = "$1" ]; }
body_is() { [ "$BODY" = "$1" ]; }
has() { grep -qF -- "$1" <<<"$BODY"; }
field() { grep -o "\"$1\":\"[^\"]*\"" <<<"$BODY" | head -1 | cut -d'"' -f4; }
header_is() { [ "$(grep -i "^$1:" "$TMP/headers" | head -1 | cut -d' ' -f2- | tr -d '\r')" = "$2" ]; }
no_header() { ! grep -qi "^$1:" "$TMP/headers"; }
problem_type() { header_is Content-Type application/problem+json; }
replayed() { header_is X-Cache-Lookup IDEMPOTENT-HIT; }
# problem STATUS CODE TITLE DETAIL STORED: the exact bytes the service answers
problem() {
  printf '{"type":"%s%s","title":"%s","status":%s,"detail":"%s","code":"%s","stored":%s}' \
    "$TYPE" "$2" "$3" "$1" "$4" "$2" "$5"
}
# charges_for SESSION: the processor's charges made for a checkout session
charges_for() {
  curl -s "$PROCESSOR/v1/charges" | grep -o "\"session_id\":\"$1\"" | wc -l | tr -d ' '
}
arm() {  # arm FAULT_JSON: the processor's test-only fault control
  [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary "$1" "$PROCESSOR/_control/faults")" = 200 ] || fail "arm fault $1"
}

call GET /health ""
check "health answers 200" status_is 200

# --- /metrics (Prometheus' text format) moves with what the service answers.
METRICS_URL=$SERVICE/metrics
# shellcheck source=tests/e2e/metrics_lib.sh
source "$(dirname "$0")/metrics_lib.sh"
CO='route="checkout"'
created=$(metric "checkout_http_requests_total{$CO,status=\"201\"}")
refused=$(metric "checkout_http_requests_total{$CO,status=\"422\"}")
replays=$(metric "checkout_idempotent_replays_total{$CO}")
timed=$(metric "checkout_http_request_duration_seconds_count{$CO}")
charged=$(metric 'checkout_processor_calls_total{operation="POST /v1/charges",result="done"}')
S=$(session metrics)
K=$(key metrics)
call POST "/checkout/$S/complete" "$(checkout_body 1234)" -H "Idempotency-Key: $K"
check "metrics: a checkout answers 201" status_is 201
call POST "/checkout/$S/complete" "$(checkout_body 1234)" -H "Idempotency-Key: $K"
check "metrics: its retry is a replay" eval 'status_is 201 && replayed'
call POST "/checkout/$S/complete" "$(checkout_body 4321)" -H "Idempotency-Key: $K"
check "metrics: the key with another amount answers 422" status_is 422
check "metrics: requests by route and status (two more 201s)" metric_is "checkout_http_requests_total{$CO,status=\"201\"}" $((created + 2))
check "metrics: ... one more 422" metric_is "checkout_http_requests_total{$CO,status=\"422\"}" $((refused + 1))
check "metrics: one more replay" metric_is "checkout_idempotent_replays_total{$CO}" $((replays + 1))
check "metrics: three more latencies observed" metric_is "checkout_http_request_duration_seconds_count{$CO}" $((timed + 3))
check "metrics: one more charge at the processor (the replay and the 422 called nothing)" \
  metric_is 'checkout_processor_calls_total{operation="POST /v1/charges",result="done"}' $((charged + 1))
check "metrics: the client's round trips are exposed" eval '[ "$(metric idem_client_round_trips_total)" -gt 0 ]'
check "metrics: the exposition is Prometheus text (TYPE lines)" eval \
  'grep -qx "# TYPE checkout_http_requests_total counter" <<<"$(curl -s "$METRICS_URL")"'

# --- The header is a Structured Field String: "K" and K are one key, one charge.
S=$(session quoted)
K=$(key quoted-then-bare)
call POST "/checkout/$S/complete" "$(checkout_body 1999)" -H "Idempotency-Key: \"$K\""
check "quoted key: first checkout answers 201" status_is 201
check "quoted key: not a replay" no_header X-Cache-Lookup
keep quoted
call POST "/checkout/$S/complete" "$(checkout_body 1999)" -H "Idempotency-Key: $K"
check "the same key bare answers 201" status_is 201
check "the same key bare is a replay (X-Cache-Lookup: IDEMPOTENT-HIT)" replayed
check "the same key bare replays the same bytes" same_bytes quoted
check "quoted then bare: exactly 1 charge" [ "$(charges_for "$S")" = 1 ]
S=$(session bare)
K=$(key bare-then-quoted)
call POST "/checkout/$S/complete" "$(checkout_body 2099)" -H "Idempotency-Key: $K"
check "bare key: first checkout answers 201" status_is 201
keep bare
call POST "/checkout/$S/complete" "$(checkout_body 2099)" -H "Idempotency-Key: \"$K\""
check "the same key quoted is a replay with the same bytes" eval 'status_is 201 && replayed && same_bytes bare'
check "bare then quoted: exactly 1 charge" [ "$(charges_for "$S")" = 1 ]

# --- A key belongs to the tenant: the same key on another route is refused, charges nothing.
S_B=$(session other-route)
call POST "/checkout/$S_B/complete" "$(checkout_body 2099)" -H "Idempotency-Key: $K"
check "the same key on another checkout route: 422 ERR_IDEMPOTENCY_KEY_REUSED naming the route" body_is \
  "$(problem 422 ERR_IDEMPOTENCY_KEY_REUSED "Idempotency-Key reused for another request" \
     "this Idempotency-Key was first used with another route; nothing was executed. Use a new key for each request" \
     false | sed 's/}$/,"differs":["resource"]}/')"
check "the reused key answers 422 as problem+json" eval 'status_is 422 && problem_type'
check "the reused key charged nothing on the other route" [ "$(charges_for "$S_B")" = 0 ]
call POST "/checkout/$S_B/complete" "$(checkout_body 2099)" -H "Idempotency-Key: $(key other-route)"
check "a new key on that route charges once" eval 'status_is 201 && [ "$(charges_for "$S_B")" = 1 ]'
# Twenty requests with one key, ten to each of two routes, at once: one charge in all.
S_C=$(session race-c)
S_D=$(session race-d)
KR=$(key race)
for i in $(seq 1 10); do
  for s in "$S_C" "$S_D"; do
    curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
      -H "Idempotency-Key: $KR" --data-binary "$(checkout_body 1234)" "$SERVICE/checkout/$s/complete" >>"$TMP/race" &
  done
done
wait
check "one key raced on two routes: exactly 1 charge" [ $(( $(charges_for "$S_C") + $(charges_for "$S_D") )) = 1 ]
check "one key raced on two routes: every answer 201, 409 or 422" [ "$(grep -cvE '^(201|409|422)$' "$TMP/race")" = 0 ]
check "one key raced on two routes: some were refused as reused" [ "$(grep -c '^422$' "$TMP/race")" -ge 1 ]

# --- What is no key: 400 ERR_IDEMPOTENCY_KEY_INVALID, the reason, "stored": false, no charge.
invalid_key() {  # invalid_key NAME DETAIL CURL-OPTIONS...
  local name=$1 detail=$2
  shift 2
  local s
  s=$(session "$name")
  call POST "/checkout/$s/complete" "$(checkout_body 1500)" "$@"
  check "$name: 400" status_is 400
  check "$name: problem+json" problem_type
  check "$name: exact body" body_is "$(problem 400 ERR_IDEMPOTENCY_KEY_INVALID "Idempotency-Key invalid" "$detail" false)"
  check "$name: nothing charged" [ "$(charges_for "$s")" = 0 ]
}
A=$(key list-a)
B=$(key list-b)
invalid_key "a list value" \
  "Idempotency-Key holds more than one value (the comma at position $((${#A} + 2)) makes a list, as a proxy merging two headers would): send one key" \
  -H "Idempotency-Key: \"$A\", \"$B\""
K=$(key params)
invalid_key "parameters" "Idempotency-Key has parameters (';' at position $((${#K} + 2))): send the key alone" \
  -H "Idempotency-Key: \"$K\";p=1"
K=$(key two-lines)
invalid_key "two header lines" \
  "Idempotency-Key was sent 2 times: send it once, with one key (several lines of a header make a list)" \
  -H "Idempotency-Key: $K" -H "Idempotency-Key: $K"
K=$(key escape)
invalid_key "a bad escape" \
  "Idempotency-Key has a backslash before 'x' at position $((${#K} + 1)): a String escapes only \\\\\\\" and \\\\\\\\" \
  -H "Idempotency-Key: \"$K\\x\""
K=$(key non-ascii)
invalid_key "a non-ASCII byte" \
  "Idempotency-Key has a byte outside printable ASCII (0xC3) at position $((${#K} + 1)): a String holds only 0x20..0x7E" \
  -H "Idempotency-Key: \"$K"$'\xc3\xa9'"\""

# --- Keys up to 255 characters (Stripe's limit), 256 refused.
S=$(session key255)
K255=$(key key255)
K255=$K255$(printf 'k%.0s' $(seq 1 $((255 - ${#K255}))))
call POST "/checkout/$S/complete" "$(checkout_body 1600)" -H "Idempotency-Key: $K255"
check "the long key is 255 characters" [ ${#K255} = 255 ]
check "a 255-character key answers 201" status_is 201
check "a 255-character key made 1 charge" [ "$(charges_for "$S")" = 1 ]
S=$(session key256)
call POST "/checkout/$S/complete" "$(checkout_body 1600)" -H "Idempotency-Key: ${K255}k"
check "a 256-character key is refused with the length" body_is "$(problem 400 ERR_IDEMPOTENCY_KEY_INVALID \
  "Idempotency-Key invalid" "idempotency key is 256 characters long; it must be 16 to 255" false)"
check "a 256-character key answers 400 and charges nothing" eval 'status_is 400 && [ "$(charges_for "$S")" = 0 ]'

# --- What cpp-httplib answers by itself is problem+json too.
call GET /v1/nothing ""
check "an unknown route answers 404" status_is 404
check "the 404 is problem+json" problem_type
check "the 404 body" body_is "$(problem 404 ERR_NOT_FOUND "Not found" \
  "no route answers GET /v1/nothing (POST /checkout/{session_id}/complete, POST /v1/payments/{payment_id}/refunds, GET /health)" false)"
S=$(session get)
call GET "/checkout/$S/complete" ""
check "GET on the checkout route answers 405" status_is 405
check "the 405 says Allow: POST" header_is Allow POST
check "the 405 is problem+json" problem_type
check "the 405 body" body_is "$(problem 405 ERR_METHOD_NOT_ALLOWED "Method not allowed" \
  "GET is not allowed on /checkout/$S/complete; it takes POST" false)"
call DELETE /health ""
check "DELETE /health answers 405 with Allow: GET, HEAD" eval 'status_is 405 && header_is Allow "GET, HEAD" && problem_type'
S=$(session big)
head -c 1100000 /dev/zero | tr '\0' ' ' >"$TMP/big"
call POST "/checkout/$S/complete" "@$TMP/big" -H "Idempotency-Key: $(key big)"
check "a body over 1 MiB answers 413" status_is 413
check "the 413 is problem+json" problem_type
check "the 413 body" body_is "$(problem 413 ERR_PAYLOAD_TOO_LARGE "Body too large" \
  "request bodies are limited to 1048576 bytes; this one is 1100000: nothing was recorded" false)"
check "the 413 charged nothing" [ "$(charges_for "$S")" = 0 ]

# --- "stored": a malformed body is refused before any key work (false): fix it, keep the key.
S=$(session fixed)
K=$(key fixed)
call POST "/checkout/$S/complete" '{"amount_cents":1700,"currency":"US dollars","payment_method":"tok_visa"}' \
  -H "Idempotency-Key: $K"
check "a malformed body: 400 ERR_REQUEST_INVALID, stored false" body_is "$(problem 400 ERR_REQUEST_INVALID \
  "Invalid request" "currency must be a 3-letter code, e.g. usd" false)"
check "a malformed body answers 400 and charges nothing" eval 'status_is 400 && [ "$(charges_for "$S")" = 0 ]'
call POST "/checkout/$S/complete" "$(checkout_body 1700)" -H "Idempotency-Key: $K"
check "the fixed body with the same key answers 201" status_is 201
check "the fixed body with the same key is no replay" no_header X-Cache-Lookup
check "the fixed body made 1 charge" [ "$(charges_for "$S")" = 1 ]

# A stored business refusal (true): replayed; a fixed body with the same key is 422.
S=$(session refund)
call POST "/checkout/$S/complete" "$(checkout_body 3000)" -H "Idempotency-Key: $(key to-refund)"
check "checkout to refund answers 201" status_is 201
PAYMENT=$(field payment_id)
CHARGE_ID=$(field charge_id)
R=$(key refund)
refund() { echo "{\"amount_cents\":$1,\"reason\":\"requested_by_customer\",\"currency\":\"usd\"}"; }
call POST "/v1/payments/$PAYMENT/refunds" "$(refund 3001)" -H "Idempotency-Key: $R"
check "a refund beyond the payment: 400 ERR_REFUND_EXCEEDS_PAYMENT, stored true" body_is "$(problem 400 \
  ERR_REFUND_EXCEEDS_PAYMENT "Refund exceeds payment" "3000 cents are left to refund" true)"
check "that refusal answers 400 as problem+json" eval 'status_is 400 && problem_type && no_header X-Cache-Lookup'
keep exceeds
call POST "/v1/payments/$PAYMENT/refunds" "$(refund 3001)" -H "Idempotency-Key: $R"
check "the same refused refund again is a replay with the same bytes" eval 'status_is 400 && replayed && same_bytes exceeds'
call POST "/v1/payments/$PAYMENT/refunds" "$(refund 1000)" -H "Idempotency-Key: $R"
check "a fixed refund with the same key answers 422 ERR_IDEMPOTENCY_PAYLOAD_MISMATCH" \
  eval 'status_is 422 && [ "$(field code)" = ERR_IDEMPOTENCY_PAYLOAD_MISMATCH ]'
check "no refund reached the processor" \
  [ "$(curl -s "$PROCESSOR/v1/refunds?charge=$CHARGE_ID" | grep -o '"object":"refund"' | wc -l | tr -d ' ')" = 0 ]
call POST "/v1/payments/$PAYMENT/refunds" "$(refund 1000)" -H "Idempotency-Key: $(key refund-fixed)"
check "the fixed refund with a new key answers 201" status_is 201
check "1 refund at the processor" \
  [ "$(curl -s "$PROCESSOR/v1/refunds?charge=$CHARGE_ID" | grep -o '"object":"refund"' | wc -l | tr -d ' ')" = 1 ]

# --- A failing processor, said in words ("stored": false: the retry with the key is the next attempt).
RETRY="Retry with the same Idempotency-Key after Retry-After seconds: the retry first asks the processor what it did, so nothing is charged or refunded twice"
S=$(session transient)
K=$(key transient)
arm '{"mode":"transient","count":1}'
call POST "/checkout/$S/complete" "$(checkout_body 1800)" -H "Idempotency-Key: $K"
check "a processor 503: 503 ERR_PROCESSOR_UNAVAILABLE in words" body_is "$(problem 503 ERR_PROCESSOR_UNAVAILABLE \
  "Payment processor unavailable" "the payment processor answered 503. $RETRY" false)"
check "the 503 has Retry-After: 1" eval 'status_is 503 && header_is Retry-After 1'
call POST "/checkout/$S/complete" "$(checkout_body 1800)" -H "Idempotency-Key: $K"
check "its retry answers 201 with 1 charge" eval 'status_is 201 && [ "$(charges_for "$S")" = 1 ]'
S=$(session timeout)
K=$(key timeout)
arm '{"mode":"timeout","count":1,"delay_ms":3000}'
call POST "/checkout/$S/complete" "$(checkout_body 1900)" -H "Idempotency-Key: $K"
check "a processor that does not answer: 504 ERR_PROCESSOR_TIMEOUT in words" body_is "$(problem 504 \
  ERR_PROCESSOR_TIMEOUT "Payment processor timeout" \
  "the payment processor did not answer within 2 s; it may have acted on the request. $RETRY" false)"
check "the 504 has Retry-After: 1" eval 'status_is 504 && header_is Retry-After 1'
sleep 1.5  # the processor's late answer lands; the charge exists
call POST "/checkout/$S/complete" "$(checkout_body 1900)" -H "Idempotency-Key: $K"
check "its retry answers 201 with 1 charge (verified, not charged again)" \
  eval 'status_is 201 && [ "$(charges_for "$S")" = 1 ]'

echo "service_test: $CHECKS checks passed"
