-- (c) Contention: every client works the same 10 keys. A key that is free (absent or past its
-- ttl) is acquired, the order written and the key completed, all in one transaction; while that
-- transaction runs, the others get in_progress (acquire does not queue on the key's lock); after
-- it commits they get replay until the ttl (:ttl_ms, a few ms) runs out and the next
-- acquire starts a new generation. So the three outcomes keep cycling for the whole run.
-- The bench_outcome_* sequences count the outcomes (nextval in the same statement: no extra trip).
-- pgbench -n -M prepared -D ttl_ms=5 -f contended.sql
\set k random(1, 10)
\set r random(1000000000000000, 9223372036854775806)
BEGIN;
SELECT handle, coalesce(attempt, 0) AS attempt, (outcome = 'acquired')::int AS acquired,
       CASE outcome WHEN 'acquired' THEN nextval('bench_outcome_acquired')
                    WHEN 'replay' THEN nextval('bench_outcome_replay')
                    WHEN 'in_progress' THEN nextval('bench_outcome_in_progress')
                    ELSE nextval('bench_outcome_other') END AS counted
  FROM idem.acquire('acme', 'contended-key-' || (100 + :k), bench_payload('cus_contended', 1999, 'k' || :k),
                    ttl => (:ttl_ms || ' milliseconds')::interval) \gset
\if :acquired
INSERT INTO bench_orders (order_id, tenant_id, amount_cents, payload)
VALUES ('ord-c-' || :client_id || '-' || :r, 'acme', 1999, bench_payload('cus_contended', 1999, 'k' || :k))
ON CONFLICT DO NOTHING;
SELECT idem.complete(:handle, :attempt, 201, '{"content-type":"application/json"}',
                     convert_to('{"order_id":"ord-c-' || :client_id || '-' || :r || '","status":"created"}', 'UTF8'),
                     'ord-c-' || :client_id || '-' || :r);
\endif
COMMIT;
