-- Bug regression: a resolved record that had a checkpoint was resumed after it expired. With
-- ttl => '1 second', checkpoint 'charge_created', complete, then 1.2 s later an acquire with a
-- *different* payload answered resumed at charge_created in generation 1 (no mismatch) and would
-- have repeated the mutation from the old charge. Fixed: an expired record is history; the key
-- starts generation 2 with no recovery point, whatever the payload.
\set SHOW_CONTEXT never

SELECT handle AS h, attempt AS a FROM idem.acquire('t-hist', 'history-key-00001', '{"amount":100}'::jsonb, ttl => '1 second') \gset
SELECT idem.checkpoint(:'h', :a, 'charge_created', '{"charge":"ch_1"}') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h', :a, 201, '{}', 'charged');
SELECT expires_at IS NOT NULL AS expires, recovery_point FROM idem.keys WHERE tenant_id = 't-hist';
SELECT pg_sleep(1.2);
-- Another payload: a new generation, not a resume and not a mismatch.
SELECT outcome, generation, recovery_point, recovery_data, attempt > :a AS new_token
  FROM idem.acquire('t-hist', 'history-key-00001', '{"amount":999}'::jsonb);
SELECT status, generation, recovery_point, recovery_data, response_status FROM idem.keys WHERE tenant_id = 't-hist';

-- The same payload: also a new generation.
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-hist', 'history-key-00002', '{"amount":100}'::jsonb, ttl => '1 second') \gset
SELECT idem.checkpoint(:'h2', :a2, 'charge_created', '{"charge":"ch_2"}') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h2', :a2, 201, '{}', 'charged');
SELECT pg_sleep(1.2);
SELECT outcome, generation, recovery_point, recovery_data
  FROM idem.acquire('t-hist', 'history-key-00002', '{"amount":100}'::jsonb);
-- The old holder's token is fenced out of the new generation.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h2', :a2, '{}', 'stale'), jsonb_build_object('a2', :a2)) ~ '^IK005 ' AS stale_refused;

-- Before it expires, the resolved record replays (same payload) or refuses (another payload).
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-hist', 'history-key-00003', '{"amount":5}'::jsonb, ttl => '1 hour') \gset
SELECT idem.checkpoint(:'h3', :a3, 'charge_created') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h3', :a3, 201, '{}', 'five');
SELECT outcome, generation, recovery_point, convert_from(response_body, 'UTF8') AS body
  FROM idem.acquire('t-hist', 'history-key-00003', '{"amount":5}'::jsonb);
SELECT outcome, generation, recovery_point FROM idem.acquire('t-hist', 'history-key-00003', '{"amount":6}'::jsonb);
