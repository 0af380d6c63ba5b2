-- FLOOR: the business write alone, in the same transaction shape as new_key.sql (same row, same
-- payload expression, same INSERT), so the ratio to it is the cost of idempotency.
-- pgbench -n -M prepared -f floor.sql
\set r random(1000000000000000, 9223372036854775806)
\set amount random(100, 99999)
BEGIN;
INSERT INTO bench_orders (order_id, tenant_id, amount_cents, payload)
VALUES ('ord-' || :client_id || '-' || :r, 'acme', :amount, bench_payload('cus_' || :client_id, :amount, :r))
ON CONFLICT DO NOTHING;
COMMIT;
