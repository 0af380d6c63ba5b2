-- A new key per transaction, for one of eight tenants: acquire -> business write -> complete,
-- committed together (on Citus: all on the tenant's worker). Any other outcome fails the
-- transaction (division_by_zero).
\set r random(1000000000000000, 9223372036854775806)
\set t random(0, 7)
BEGIN;
SELECT handle, attempt, 1 / (outcome = 'acquired')::int AS must_be_acquired
  FROM idem.acquire('bench-t' || :t, 'new-' || :client_id || '-' || :r, bench_payload('cus_' || :client_id, 1999, :r)) \gset
INSERT INTO bench_orders (tenant_id, order_id, amount_cents, payload)
VALUES ('bench-t' || :t, 'ord-' || :client_id || '-' || :r, 1999, bench_payload('cus_' || :client_id, 1999, :r));
SELECT idem.complete('bench-t' || :t, :handle, :attempt, 201, '{"content-type":"application/json"}',
                     convert_to('{"order_id":"ord-' || :client_id || '-' || :r || '","status":"created"}', 'UTF8'),
                     'ord-' || :client_id || '-' || :r);
COMMIT;
