-- FLOOR: the business write alone.
\set r random(1000000000000000, 9223372036854775806)
BEGIN;
INSERT INTO ob_orders (order_id, tenant_id, amount, payload)
VALUES ('ord-' || :client_id || '-' || :r, 't' || :client_id, (:r)::bigint % 100000, jsonb_build_object('order', (:r)::bigint, 'amount', (:r)::bigint % 100000));
COMMIT;
