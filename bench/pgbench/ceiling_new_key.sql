-- CEILING of the client-driven new-key flow: new_key.sql's five statements, with acquire and
-- complete replaced by statements that take the same arguments and do nothing (no key, no audit
-- row, no lock). No implementation of this flow, ours or the peer's, can run faster: the bound
-- new_key and peer_new_key are measured against ("1.5x the peer" lies above it, README).
-- pgbench -n -M prepared -f ceiling_new_key.sql
\set r random(1000000000000000, 9223372036854775806)
\set amount random(100, 99999)
BEGIN;
SELECT 'h' AS handle, 1 AS attempt, 'acme' AS tenant, 'new-' || :client_id || '-' || :r AS key,
       bench_payload('cus_' || :client_id, :amount, :r) IS NOT NULL AS payload \gset
INSERT INTO bench_orders (order_id, tenant_id, amount_cents, payload)
VALUES ('ord-' || :client_id || '-' || :r, 'acme', :amount, bench_payload('cus_' || :client_id, :amount, :r))
ON CONFLICT DO NOTHING;
SELECT :handle, :attempt, 201, '{"content-type":"application/json"}',
       convert_to('{"order_id":"ord-' || :client_id || '-' || :r || '","status":"created"}', 'UTF8'),
       'ord-' || :client_id || '-' || :r;
COMMIT;
