-- The business write and its event, every client on one tenant (one group: commits sequence one at a time).
\set r random(1000000000000000, 9223372036854775806)
BEGIN;
INSERT INTO ob_orders (order_id, tenant_id, amount, payload)
VALUES ('ord-' || :client_id || '-' || :r, 't' || :client_id, (:r)::bigint % 100000, jsonb_build_object('order', (:r)::bigint, 'amount', (:r)::bigint % 100000));
SELECT idem.emit('acme', 'order.intent', jsonb_build_object('order', (:r)::bigint, 'amount', (:r)::bigint % 100000), 'ord-' || :client_id || '-' || :r);
COMMIT;
