-- Bug regression: abandoned leases lived forever. An in_progress record without a checkpoint was
-- never purged, and lease => '100 years' blocked a key for good. Fixed: idem.max_lease bounds
-- every lease (1 hour by default, superuser-only), and an abandoned lease without a checkpoint
-- becomes history a TTL after its lease ran out (then purge removes it, and the key starts the
-- next generation). With a checkpoint it stays (checkpointed_work_never_purged).
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session
SHOW idem.max_lease;
SELECT expect_error($$SELECT idem.acquire('t-aband', 'abandon-key-00001', '{}'::jsonb, lease => '100 years')$$) AS century;
SELECT expect_error($$SELECT idem.acquire('t-aband', 'abandon-key-00001', '{}'::jsonb, lease => '61 minutes')$$) AS over_an_hour;
SELECT expect_error($$SELECT idem.acquire('t-aband', 'abandon-key-00001', '{}'::jsonb, ttl => '91 days')$$) AS ttl_over_max;
SELECT outcome, lease_expires_at - clock_timestamp() <= interval '1 hour' AS bounded
  FROM idem.acquire('t-aband', 'abandon-key-00002', '{}'::jsonb, lease => '1 hour');
-- A default above the bound is named, not silently clipped.
SET idem.lease_timeout = '2h';
SELECT expect_error($$SELECT idem.acquire('t-aband', 'abandon-key-00001', '{}'::jsonb)$$) AS default_over_max;
RESET idem.lease_timeout;
SELECT count(*) AS nothing_recorded FROM idem.keys WHERE client_key = 'abandon-key-00001';
-- Services cannot raise the bound.
SET ROLE idem_service;
SELECT expect_error($$SET idem.max_lease = '10h'$$) AS service_raises_max;
RESET ROLE;

-- Abandoned: lease 50 ms, TTL 100 ms, no checkpoint. History 150 ms after acquire.
SELECT handle AS h, attempt AS a FROM idem.acquire('t-aband', 'abandon-key-00003', '{"n":3}'::jsonb, lease => '50 milliseconds', ttl => '100 milliseconds') \gset
SELECT extract(epoch FROM expires_at - lease_expires_at) AS history_after_lease_seconds
  FROM idem.keys WHERE client_key = 'abandon-key-00003';
SELECT pg_sleep(0.3);
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
SELECT count(*) AS abandoned_left FROM idem.keys WHERE client_key = 'abandon-key-00003';
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h', :a, '{}', 'late'), jsonb_build_object('a', :a)) AS late_holder;
SELECT outcome, generation FROM idem.acquire('t-aband', 'abandon-key-00003', '{"n":33}'::jsonb);

-- Before purge, the same record (history) also starts the next generation: purge changes nothing.
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-aband', 'abandon-key-00004', '{"n":4}'::jsonb, lease => '50 milliseconds', ttl => '100 milliseconds') \gset
SELECT pg_sleep(0.3);
SELECT outcome, generation, recovery_point FROM idem.acquire('t-aband', 'abandon-key-00004', '{"n":44}'::jsonb);
-- Within the TTL after its lease, an abandoned lease resumes (same payload) or refuses (another).
SELECT outcome FROM idem.acquire('t-aband', 'abandon-key-00005', '{"n":5}'::jsonb, lease => '50 milliseconds', ttl => '1 hour');
SELECT pg_sleep(0.1);
SELECT outcome FROM idem.acquire('t-aband', 'abandon-key-00005', '{"n":55}'::jsonb);
SELECT outcome, generation, recovery_point FROM idem.acquire('t-aband', 'abandon-key-00005', '{"n":5}'::jsonb);
