-- The business write and its event in one statement (no extra round trip): what emit costs the
-- server. Peer: peer_in_write.sql.
\set r random(1000000000000000, 9223372036854775806)
BEGIN;
WITH o AS (
  INSERT INTO ob_orders (order_id, tenant_id, amount, payload)
  VALUES ('ord-' || :client_id || '-' || :r, 't' || :client_id, (:r)::bigint % 100000, jsonb_build_object('order', (:r)::bigint, 'amount', (:r)::bigint % 100000))
  RETURNING order_id, tenant_id, payload)
SELECT idem.emit(o.tenant_id, 'order.intent', o.payload, o.order_id) FROM o;
COMMIT;
