-- idem.stats: per tenant and route, the outcomes of a window, read from the audit trail and the
-- records in progress (no write of its own): new keys completed, a replay, a mismatch, an
-- in_progress refusal, a key reused on another route, a release and its resume, a lease that ran
-- out and its takeover (the abandoned attempt), an attempt still in flight; a bound auditor sees
-- its tenants only; a bad window is refused.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';
CREATE FUNCTION stats_done(p_tenant text, p_key text, p_route text, p_body jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  SELECT * INTO r FROM idem.acquire(p_tenant, p_key, p_body, resource => p_route);
  IF r.outcome IN ('acquired', 'resumed') THEN PERFORM idem.complete(r.handle, r.attempt, 201, '{}', 'ok'); END IF;
  RETURN r.outcome;
END $$;
SELECT stats_done('stats-a', 'stats-key-0000001', 'POST /orders', '{"n":1}');
SELECT stats_done('stats-a', 'stats-key-0000002', 'POST /orders', '{"n":2}');
SELECT stats_done('stats-a', 'stats-key-0000001', 'POST /orders', '{"n":1}') AS replay;
SELECT stats_done('stats-a', 'stats-key-0000001', 'POST /orders', '{"n":9}') AS mismatch;
SELECT stats_done('stats-a', 'stats-key-0000001', 'POST /refunds', '{"n":1}') AS key_reused;
-- A release, then the resume that completes.
SELECT handle AS h, attempt AS a FROM idem.acquire('stats-a', 'stats-key-0000003', '{}'::jsonb, resource => 'POST /refunds') \gset
SELECT idem.release(:'h', :a, 'processor timeout', handler_called => false);
SELECT stats_done('stats-a', 'stats-key-0000003', 'POST /refunds', '{}') AS after_release;
-- A lease that runs out, then the takeover that completes (the first attempt goes on the record
-- as abandoned).
SELECT outcome FROM idem.acquire('stats-a', 'stats-key-0000004', '{}'::jsonb, resource => 'POST /refunds', lease => '1 millisecond');
SELECT pg_sleep(0.05);
SELECT stats_done('stats-a', 'stats-key-0000004', 'POST /refunds', '{}') AS after_takeover;
-- An attempt in flight (its lease runs), and a caller told in_progress meanwhile.
SELECT outcome FROM idem.acquire('stats-a', 'stats-key-0000005', '{}'::jsonb, resource => 'POST /orders', lease => '1 hour');
SELECT outcome FROM idem.acquire('stats-a', 'stats-key-0000005', '{}'::jsonb, resource => 'POST /orders');
SELECT stats_done('stats-b', 'stats-key-0000001', 'POST /orders', '{"n":1}');

SELECT resource, generations, attempts, resumed, takeovers, completed, released, abandoned, resolved_by_operator,
       replays, in_progress, mismatches, key_reused, in_flight
  FROM idem.stats(now() - interval '1 hour') WHERE tenant_id = 'stats-a' ORDER BY resource;
SELECT tenant_id, completed FROM idem.stats() WHERE tenant_id LIKE 'stats-%' ORDER BY 1, resource;
SELECT count(*) AS nothing_before_the_window FROM idem.stats(now() - interval '2 hours', now() - interval '1 hour') WHERE tenant_id LIKE 'stats-%';

-- A bound auditor: its tenant's rows only.
CREATE ROLE stats_auditor IN ROLE idem_auditor;
SELECT idem.bind_tenant('stats_auditor', 'stats-b');
SET SESSION AUTHORIZATION stats_auditor;
SELECT DISTINCT tenant_id FROM idem.stats();
RESET SESSION AUTHORIZATION;
SELECT idem.unbind_tenant('stats_auditor', 'stats-b');
DROP ROLE stats_auditor;

-- A window that ends before it starts, or has no end.
SELECT * FROM idem.stats(now(), now() - interval '1 minute');
SELECT * FROM idem.stats(NULL);
DROP FUNCTION stats_done(text, text, text, jsonb);
