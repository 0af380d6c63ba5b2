#!/usr/bin/env bash
# The demo's checkout service pointed at the Citus coordinator (make citus-test): the stack of
# scripts/stack.sh (processor, service, order consumer) with STACK_CITUS=1, its orders, refunds
# and sync tables distributed by tenant beside idem.keys (examples/checkout-service/citus.sql),
# over real HTTP, for a tenant on each worker: one charge per key, replays byte for byte, a reused
# key refused, a duplicate storm charging once, a refund, the order machine's guard and log on the
# shards, and every order synced once by the consumer claiming tenant by tenant.
# Needs the Citus cluster running (scripts/citus.sh start) and build/examples built.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=idem_citus_stack
source "$ROOT/tests/citus/lib.sh"
export STACK_CITUS=1 STACK_DB=$DB STACK_RUN=$ROOT/.run/citus-stack SERVICE_PORT=${CITUS_SERVICE_PORT:-7430} \
  PROCESSOR_PORT=${CITUS_PROCESSOR_PORT:-7431} PGPORT
PGPORT=$(port_of coordinator)
stack() { "$ROOT/scripts/stack.sh" "$@"; }
trap 'stack down; "$ROOT/scripts/citus.sh" drop-database "$DB"' EXIT

stack setup || { echo "FAILED: scripts/stack.sh setup on the Citus cluster"; exit 1; }
check "citus.sql: the four tables distributed beside idem.keys, each ok" "4" \
  "$(cut -d'|' -f2 "$STACK_RUN/citus-setup.out" | grep -cx t)"
stack up || { echo "FAILED: the stack did not start on Citus; logs in $STACK_RUN/"; exit 1; }

# A tenant of each worker, in this database's placement of the shards.
tenant_on() {
  q "SELECT t FROM generate_series(1, 200) i, LATERAL (SELECT 'shop-' || i AS t) x
      WHERE (SELECT nodeport FROM pg_dist_shard_placement
              WHERE shardid = get_shard_id_for_distribution_column('idem.keys', t)) = $1 ORDER BY i LIMIT 1"
}
t1=$(tenant_on "$(port_of worker1)")
t2=$(tenant_on "$(port_of worker2)")
check "a tenant on each worker" "yes" "$([ -n "$t1" ] && [ -n "$t2" ] && [ "$t1" != "$t2" ] && echo yes)"

TMP=$(mktemp -d)
SERVICE=http://127.0.0.1:$SERVICE_PORT
RUNID=$RANDOM$RANDOM
# post TENANT PATH KEY BODY OUT: status code; exact body bytes in OUT.
post() {
  curl -s -o "$5" -w '%{http_code}' -X POST -H "Authorization: Bearer $(stack token "$1" web)" \
    -H 'Content-Type: application/json' -H "Idempotency-Key: \"$3\"" --data-binary "$4" "$SERVICE$2"
}
body() { echo "{\"amount_cents\":$1,\"currency\":\"usd\",\"payment_method\":\"tok_visa\"}"; }
field() { grep -o "\"$1\":\"[^\"]*\"" "$2" | head -1 | cut -d'"' -f4; }
charges_for() { q "SELECT count(*) FROM processor.charges WHERE metadata->>'session_id' = '$1'"; }  # SESSION

for t in "$t1" "$t2"; do
  s=cs_${t//-/_}_$RUNID
  check "checkout for $t through the coordinator: 201" "201" "$(post "$t" "/checkout/$s/complete" "k-$s" "$(body 1999)" "$TMP/first")"
  check "... its retry replays it: 201, the same bytes" "201 same" \
    "$(post "$t" "/checkout/$s/complete" "k-$s" "$(body 1999)" "$TMP/again") $(cmp -s "$TMP/first" "$TMP/again" && echo same)"
  check "... the key with another amount: 422" "422" "$(post "$t" "/checkout/$s/complete" "k-$s" "$(body 2500)" "$TMP/other")"
  order=$(field order_id "$TMP/first")
  check "... one order, confirmed, in the tenant's shard" "1 confirmed" \
    "$(q "SELECT count(*) || ' ' || min(status) FROM orders WHERE tenant_id = '$t' AND order_id = '$order'")"
  worker=$([ "$t" = "$t1" ] && echo worker1 || echo worker2)
  shard=$(q "SELECT shard_name('orders', get_shard_id_for_distribution_column('orders', '$t'))")
  check "... on $t's worker ($worker holds the row)" "1" "$(q "$worker" "SELECT count(*) FROM $shard WHERE order_id = '$order'")"
  check "... the order machine logged created and confirmed on the shards, with the tenant" "created,confirmed" \
    "$(q "SELECT string_agg(to_state, ',' ORDER BY log_id) FROM idem.transition_log WHERE tenant_id = '$t' AND row_key = '$order'")"
  check "... and one completed audit row" "1" \
    "$(q "SELECT count(*) FROM idem.mutations WHERE tenant_id = '$t' AND order_id = '$order' AND outcome = 'completed'")"
done

# Ten callers at once with one new key: one charge at the processor, one order, ten equal bodies
# (201 for the winner and the replays; a 409 for a caller that came while it ran is allowed).
s=cs_storm_$RUNID
for i in $(seq 10); do post "$t2" "/checkout/$s/complete" "k-$s" "$(body 700)" "$TMP/storm-$i" >"$TMP/storm-$i.code" & done
wait
check "a storm of ten with one key: only 201s and 409s" "" "$(awk 1 "$TMP"/storm-*.code | sort -u | grep -vxE '201|409' | paste -sd,)"
check "... and at least one 201" "yes" "$(grep -qx 201 "$TMP"/storm-*.code && echo yes)"
check "... one charge at the processor" "1" "$(charges_for "$s")"
check "... one order" "1" "$(q "SELECT count(*) FROM orders WHERE tenant_id = '$t2' AND session_id = '$s'")"

# A refund of the first tenant's order, over HTTP, replayed.
s=cs_${t1//-/_}_$RUNID
payment=$(q "SELECT payment_id FROM orders WHERE tenant_id = '$t1' AND session_id = '$s'")
refund='{"amount_cents":500,"currency":"usd","reason":"requested_by_customer"}'
check "a refund for $t1: 201" "201" "$(post "$t1" "/v1/payments/$payment/refunds" "r-$s" "$refund" "$TMP/refund")"
check "... replayed with the same bytes" "201 same" \
  "$(post "$t1" "/v1/payments/$payment/refunds" "r-$s" "$refund" "$TMP/refund2") $(cmp -s "$TMP/refund" "$TMP/refund2" && echo same)"
check "... recorded once: one refund row, 500 cents refunded" "1 500" \
  "$(q "SELECT (SELECT count(*) FROM refunds WHERE tenant_id = '$t1' AND payment_id = '$payment') || ' ' || refunded_cents
          FROM orders WHERE tenant_id = '$t1' AND payment_id = '$payment'")"
check "another tenant's token does not see the payment: 404" "404" \
  "$(post "$t2" "/v1/payments/$payment/refunds" "r-other-$s" "$refund" "$TMP/refund3")"

# The consumer claims tenant by tenant and records every order once.
for _ in $(seq 100); do
  [ "$(q "SELECT count(*) FROM orders")" = "$(q "SELECT count(*) FROM sync_orders")" ] && break
  sleep 0.1
done
check "the order consumer (--citus) synced every order of both workers" "3 3" \
  "$(q "SELECT (SELECT count(*) FROM orders) || ' ' || (SELECT count(*) FROM sync_orders)")"
check "... each once" "0" "$(q "SELECT count(*) FROM (SELECT order_id FROM sync_order_mutations GROUP BY 1 HAVING count(*) > 1) d")"
check "... and emitted order.created for each, on the tenant's node" "3" \
  "$(q "SELECT count(*) FROM idem.outbox_events WHERE topic = 'order.created'")"
check "the processor holds as many charges as there are orders" "3" "$(q "SELECT count(*) FROM processor.charges")"

rm -rf "$TMP"
finish checkout_citus
