-- Bug regression: release after a checkpoint, then purge_expired: before the purge the key
-- resumed at its checkpoint, after it the key was a fresh acquired, so the side effect the
-- checkpoint recorded could repeat. Fixed: unresolved work with a checkpoint never becomes
-- history (expires_at NULL) and is never purged; it resumes until it is completed, or an operator
-- resolves it with idem.resolve_stuck (logged in idem.operator_actions).
\set SHOW_CONTEXT never
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;

-- Released after a checkpoint, with a tiny TTL.
SELECT handle AS h, attempt AS a FROM idem.acquire('t-stuck', 'stuck-key-0000001', '{"amount":7}'::jsonb, lease => '50 milliseconds', ttl => '50 milliseconds') \gset
SELECT idem.checkpoint(:'h', :a, 'charge_created', '{"charge":"ch_7"}') IS NOT NULL AS checkpointed;
SELECT idem.release(:'h', :a, 'processor timeout after the charge');
-- In progress after a checkpoint, its lease run out.
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-stuck', 'stuck-key-0000002', '{"amount":8}'::jsonb, lease => '50 milliseconds', ttl => '50 milliseconds') \gset
SELECT idem.checkpoint(:'h2', :a2, 'charge_created', '{"charge":"ch_8"}') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.3);
SELECT client_key, status, recovery_point, expires_at IS NULL AS never_history FROM idem.keys WHERE tenant_id = 't-stuck' ORDER BY client_key;
SELECT idem.purge_expired() AS purged;
SELECT count(*) AS kept FROM idem.keys WHERE tenant_id = 't-stuck';
-- Both still resume at their checkpoint (another payload is refused), in their generation.
SELECT outcome, generation, recovery_point, recovery_data FROM idem.acquire('t-stuck', 'stuck-key-0000001', '{"amount":70}'::jsonb);
SELECT outcome, generation, recovery_point, recovery_data, attempt AS ra, handle AS h_ra FROM idem.acquire('t-stuck', 'stuck-key-0000001', '{"amount":7}'::jsonb, lease => '50 milliseconds') \gset
SELECT :'outcome' AS outcome, :generation AS generation, :'recovery_point' AS recovery_point;
SELECT outcome, generation, recovery_point FROM idem.acquire('t-stuck', 'stuck-key-0000002', '{"amount":8}'::jsonb, lease => '50 milliseconds');
SELECT pg_sleep(0.1);

--
-- The operator resolves stuck work: the response is replayed, the action logged.
--
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, %s, %L, 409)', :'h_ra', :ra, '')) AS empty_reason;
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, %s, %L, 99)', :'h_ra', :ra, 'verified')) AS bad_status;
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, %s, %L, 409, NULL, %L)', :'h_ra', :ra, 'verified', '[]')) AS bad_headers;
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, %s, %L, 409)', :'h_ra', :ra + 1000000, 'verified'), jsonb_build_object('ra', :ra)) ~ '^IK005 ' AS wrong_attempt_lost;
SELECT idem.resolve_stuck(:'h_ra', :ra, 'charge ch_7 verified at the processor', 201, convert_to('{"charge":"ch_7"}', 'UTF8'), '{"Content-Type":"application/json"}');
SELECT outcome, generation, response_status, response_headers, convert_from(response_body, 'UTF8') AS body
  FROM idem.acquire('t-stuck', 'stuck-key-0000001', '{"amount":7}'::jsonb);
SELECT status, last_error ~ '^resolved by .*: charge ch_7 verified at the processor$' AS says_who_and_why, expires_at IS NOT NULL AS expires
  FROM idem.keys WHERE tenant_id = 't-stuck' AND client_key = 'stuck-key-0000001';
SELECT action, generation, recovery_point, recovery_data, response_status, reason, performed_by = session_user AS by_me
  FROM idem.operator_actions WHERE tenant_id = 't-stuck';
-- The resumed holder it overrode is fenced out.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h_ra', :ra, '{}', 'late'), jsonb_build_object('ra', :ra)) ~ '^IK005 ' AS late_holder_lost;
-- A live lease is not stuck; a resolved record is not either.
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-stuck', 'stuck-key-0000003', '{}'::jsonb, lease => '1 hour') \gset
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, %s, %L, 409)', :'h3', :a3, 'verified'), jsonb_build_object('a3', :a3)) ~ '^IK003 ' AS live_lease_refused;
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, %s, %L, 409)', :'h_ra', :ra, 'again'), jsonb_build_object('ra', :ra)) ~ '^IK005 ' AS resolved_refused;
SELECT count(*) AS actions_logged FROM idem.operator_actions WHERE tenant_id = 't-stuck';
-- Operators may resolve; services may not.
SELECT has_function_privilege('idem_operator', 'idem.resolve_stuck(text, bigint, text, integer, bytea, jsonb)', 'EXECUTE') AS operator_may,
       has_function_privilege('idem_service', 'idem.resolve_stuck(text, bigint, text, integer, bytea, jsonb)', 'EXECUTE') AS service_may,
       has_function_privilege('public', 'idem.resolve_stuck(text, bigint, text, integer, bytea, jsonb)', 'EXECUTE') AS public_may;
-- Released work after a checkpoint has no holder: resolve_stuck takes its last attempt (or NULL).
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-stuck', 'stuck-key-0000004', '{"amount":4}'::jsonb) \gset
SELECT idem.checkpoint(:'h4', :a4, 'charge_created') IS NOT NULL AS checkpointed;
SELECT idem.release(:'h4', :a4, 'processor timeout');
SELECT idem.resolve_stuck(:'h4', NULL, 'no charge found at the processor', 409, convert_to('{"error":"retry with a new key"}', 'UTF8'));
SELECT outcome, response_status, convert_from(response_body, 'UTF8') AS body FROM idem.acquire('t-stuck', 'stuck-key-0000004', '{"amount":4}'::jsonb);
SELECT attempt = :a4 AS logged_last_attempt, reason FROM idem.operator_actions WHERE tenant_id = 't-stuck' ORDER BY action_id DESC LIMIT 1;
-- Released before any checkpoint is not stuck: its next request is a fresh attempt.
SELECT handle AS h5, attempt AS a5 FROM idem.acquire('t-stuck', 'stuck-key-0000005', '{}'::jsonb) \gset
SELECT idem.release(:'h5', :a5, 'transient', handler_called => false);
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, NULL, %L, 409)', :'h5', 'not needed')) AS not_stuck;
SELECT outcome FROM idem.acquire('t-stuck', 'stuck-key-0000005', '{"other":true}'::jsonb);
