-- The peer of new_key.sql (peer_setup.sql): the same business write and payload, under the
-- hand-written idempotency table, driven the same way (client-driven, one transaction).
-- pgbench -n -M prepared -f peer_new_key.sql
\set r random(1000000000000000, 9223372036854775806)
\set amount random(100, 99999)
BEGIN;
SELECT key_id, 1 / (outcome = 'acquired')::int AS must_be_acquired
  FROM peer_acquire('acme', 'new-' || :client_id || '-' || :r, bench_payload('cus_' || :client_id, :amount, :r)) \gset
INSERT INTO bench_orders (order_id, tenant_id, amount_cents, payload)
VALUES ('ord-' || :client_id || '-' || :r, 'acme', :amount, bench_payload('cus_' || :client_id, :amount, :r))
ON CONFLICT DO NOTHING;
SELECT peer_complete(:key_id, 'acme', 'ord-' || :client_id || '-' || :r, 201,
                     convert_to('{"order_id":"ord-' || :client_id || '-' || :r || '","status":"created"}', 'UTF8'));
COMMIT;
