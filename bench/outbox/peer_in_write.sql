-- PEER of emit_in_write.sql: the business write and a queue row in one statement.
\set r random(1000000000000000, 9223372036854775806)
BEGIN;
WITH o AS (
  INSERT INTO ob_orders (order_id, tenant_id, amount, payload)
  VALUES ('ord-' || :client_id || '-' || :r, 't' || :client_id, (:r)::bigint % 100000, jsonb_build_object('order', (:r)::bigint, 'amount', (:r)::bigint % 100000))
  RETURNING order_id, tenant_id, payload)
INSERT INTO peer_queue (tenant_id, topic, key, payload) SELECT o.tenant_id, 'order.intent', o.order_id, o.payload FROM o;
COMMIT;
