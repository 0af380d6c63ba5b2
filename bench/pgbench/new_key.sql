-- (a) A new key per transaction: acquire -> business write -> complete, committed together.
-- The key is unique per transaction (client id + a random 63-bit number). A transaction whose
-- outcome is not 'acquired' fails with division_by_zero, so pgbench counts it as failed.
-- acquire is called as the client calls it (see replay.sql).
-- pgbench -n -M prepared -f new_key.sql
\set r random(1000000000000000, 9223372036854775806)
\set amount random(100, 99999)
BEGIN;
SELECT (a).handle, (a).attempt, 1 / ((a).outcome = 'acquired')::int AS must_be_acquired
  FROM (SELECT idem.acquire('acme', 'new-' || :client_id || '-' || :r, bench_payload('cus_' || :client_id, :amount, :r)) AS a
        OFFSET 0) s \gset
INSERT INTO bench_orders (order_id, tenant_id, amount_cents, payload)
VALUES ('ord-' || :client_id || '-' || :r, 'acme', :amount, bench_payload('cus_' || :client_id, :amount, :r))
ON CONFLICT DO NOTHING;
SELECT idem.complete(:handle, :attempt, 201, '{"content-type":"application/json"}',
                     convert_to('{"order_id":"ord-' || :client_id || '-' || :r || '","status":"created"}', 'UTF8'),
                     'ord-' || :client_id || '-' || :r);
COMMIT;
