-- PEER: the business write and a row in the hand-written queue table (NOTIFY per statement).
\set r random(1000000000000000, 9223372036854775806)
BEGIN;
INSERT INTO ob_orders (order_id, tenant_id, amount, payload)
VALUES ('ord-' || :client_id || '-' || :r, 't' || :client_id, (:r)::bigint % 100000, jsonb_build_object('order', (:r)::bigint, 'amount', (:r)::bigint % 100000));
INSERT INTO peer_queue (tenant_id, topic, key, payload)
VALUES ('t' || :client_id, 'order.intent', 'ord-' || :client_id || '-' || :r, jsonb_build_object('order', (:r)::bigint, 'amount', (:r)::bigint % 100000));
COMMIT;
