-- The audit trail (idem.mutations): what each function appends, in the caller's transaction (a
-- rollback leaves no row); replays can be kept read-only; retry counts; and the trail is
-- append-only for every role, the owner included, except through idem.purge_audit.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session
SHOW idem.audit_replays;
CREATE FUNCTION trail(p_key text) RETURNS TABLE (outcome text, mutation_type text, handler_called boolean, generation integer,
                                                 attempt_is_token boolean, order_id text, handler_response jsonb,
                                                 local_status text, error_message text, recovery_point text, retry_count integer,
                                                 completed boolean)
  LANGUAGE sql AS $$
  SELECT m.outcome, m.mutation_type, m.handler_called, m.generation, m.attempt IS NOT NULL, m.order_id, m.handler_response,
         m.local_status, m.error_message, m.recovery_point, m.retry_count, m.completed_at IS NOT NULL
    FROM idem.mutations m WHERE m.client_key = p_key ORDER BY m.mutation_id $$;

-- A multi-step capture: acquire, checkpoint, release (timeout), resume, complete, then a replay
-- and a mismatch, and an in_progress from another transaction's open write.
SELECT handle AS h, attempt AS a FROM idem.acquire('t-audit', 'audit-key-0000001', '{"amount":5}'::jsonb, caller => 'svc',
                                                    resource => 'POST /payments/p1/capture', lease => '50 milliseconds',
                                                    mutation_type => 'capture') \gset
SELECT count(*) AS rows_after_acquire FROM idem.mutations WHERE client_key = 'audit-key-0000001';
SELECT idem.checkpoint(:'h', :a, 'charge_created', '{"charge_id":"ch_1"}') IS NOT NULL AS checkpointed;
SELECT idem.release(:'h', :a, 'processor timeout');
SELECT attempt AS a2, handle AS h_a2 FROM idem.acquire('t-audit', 'audit-key-0000001', '{"amount":5}'::jsonb, caller => 'svc',
                                       resource => 'POST /payments/p1/capture', mutation_type => 'capture') \gset
SELECT idem.complete(:'h_a2', :a2, 200, '{}', 'captured', 'ord-audit-1', '{"charge_id":"ch_1"}', 'paid');
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-0000001', '{"amount":5}'::jsonb, caller => 'svc',
                                 resource => 'POST /payments/p1/capture', mutation_type => 'capture');
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-0000001', '{"amount":6}'::jsonb, caller => 'svc',
                                 resource => 'POST /payments/p1/capture', mutation_type => 'capture');
SELECT * FROM trail('audit-key-0000001');
SELECT m.tenant_id, m.client_key, m.caller_id, m.resource, m.scope_digest = idem.scope_digest('t-audit', 'svc', 'POST /payments/p1/capture', 'audit-key-0000001') AS digest_ok,
       m.attempted_at <= m.completed_at AS ordered_times
  FROM idem.mutations m WHERE m.outcome = 'completed' AND m.client_key = 'audit-key-0000001';

-- A rollback leaves no row.
BEGIN;
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-audit', 'audit-key-0000003', '{}'::jsonb) \gset
SELECT idem.complete(:'h3', :a3, 201, '{}', 'rolled back');
ROLLBACK;
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-0000003', '{}'::jsonb);
SELECT count(*) AS rows_for_rolled_back_key FROM idem.mutations WHERE client_key = 'audit-key-0000003';

-- Replays can be kept read-only (superuser setting); mismatches are always recorded.
SET idem.audit_replays = off;
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-0000001', '{"amount":5}'::jsonb, caller => 'svc',
                                 resource => 'POST /payments/p1/capture', mutation_type => 'capture');
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-0000001', '{"amount":7}'::jsonb, caller => 'svc',
                                 resource => 'POST /payments/p1/capture', mutation_type => 'capture');
RESET idem.audit_replays;
SELECT outcome, count(*) FROM idem.mutations WHERE client_key = 'audit-key-0000001' GROUP BY outcome ORDER BY outcome;
SET ROLE idem_service;
SELECT expect_error($$SET idem.audit_replays = off$$) AS service_silences_replays;
RESET ROLE;
SELECT expect_error($$SELECT idem.acquire('t-audit', 'audit-key-0000009', '{}'::jsonb, mutation_type => 'charge')$$) AS bad_type;
SELECT expect_error($$SELECT idem.complete('t-audit:' || repeat('0', 64), 1, 200, '{}', '', handler_called => NULL)$$) AS null_handler_called;

--
-- Append-only: refused for the owner (here, the superuser that installed it) ...
--
SELECT expect_error($$UPDATE idem.mutations SET outcome = 'replay'$$) AS owner_update;
SELECT expect_error($$DELETE FROM idem.mutations$$) AS owner_delete;
SELECT expect_error($$TRUNCATE idem.mutations$$) AS owner_truncate;
SELECT expect_error($$UPDATE idem.transition_log SET outcome = 'skipped'$$) AS log_update;
SELECT error_hint($$DELETE FROM idem.mutations$$) AS hint;
-- ... and by privileges for everyone else (a service writes only through the functions).
CREATE ROLE regress_audit_svc NOLOGIN IN ROLE idem_service;
CREATE ROLE regress_audit_reader NOLOGIN IN ROLE idem_auditor;
SELECT r AS role, p AS privilege, has_table_privilege(r, 'idem.mutations', p) AS has
  FROM unnest(ARRAY['regress_audit_svc', 'regress_audit_reader']) AS r, unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p
 ORDER BY 1, 2;
SET ROLE regress_audit_svc;
SELECT expect_error($$DELETE FROM idem.mutations$$) AS service_delete;
SELECT expect_error($$INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, mutation_type, outcome, handler_called, retry_count, attempted_at) VALUES ('t', '\x00', 'k', '', '', 'create', 'completed', true, 1, now())$$) AS service_forges;
SELECT expect_error($$SELECT idem.purge_audit('1 second')$$) AS service_purges;
RESET ROLE;
DROP ROLE regress_audit_svc;
DROP ROLE regress_audit_reader;

-- purge_audit: the only way out, by age, in batches.
SELECT expect_error($$SELECT idem.purge_audit(NULL)$$) AS null_age;
SELECT expect_error($$SELECT idem.purge_audit('-1 day')$$) AS negative_age;
SELECT expect_error($$SELECT idem.purge_audit('1 day', 0)$$) AS zero_batch;
SELECT idem.purge_audit() AS purged_within_90_days;
SELECT count(*) > 0 AS rows_kept FROM idem.mutations;
-- An operator may age the trail out, not erase what is recent (idem.min_audit_retention, 1 day).
SELECT expect_error($$SELECT idem.purge_audit('1 hour')$$) AS recent_refused;
SET ROLE idem_operator;
SELECT expect_error($$SET idem.min_audit_retention = 0$$) AS operator_lowers_retention;
RESET ROLE;
SET idem.min_audit_retention = 0;
SELECT pg_sleep(0.3);
SELECT idem.purge_audit('200 milliseconds', 2) AS first_batch;
SELECT idem.purge_audit('200 milliseconds') > 0 AS the_rest;
SELECT count(*) AS rows_left FROM idem.mutations;
-- The permission ends with purge_audit's transaction.
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-0000001', '{"amount":8}'::jsonb, caller => 'svc',
                                 resource => 'POST /payments/p1/capture', mutation_type => 'capture');
SELECT expect_error($$DELETE FROM idem.mutations$$) AS delete_after_purge;
SELECT count(*) AS rows_kept FROM idem.mutations;
-- ... also inside the transaction that purged, and after a savepoint rollback around a purge.
BEGIN;
SELECT idem.purge_audit('100 years') AS nothing_that_old;
SELECT expect_error($$DELETE FROM idem.mutations$$) AS delete_in_purging_transaction;
SAVEPOINT s;
SELECT idem.purge_audit('100 years') AS again;
ROLLBACK TO SAVEPOINT s;
SELECT expect_error($$DELETE FROM idem.mutations$$) AS delete_after_savepoint_rollback;
COMMIT;
-- The transition log has no writer but the trigger (a service cannot forge an entry).
SELECT count(*) AS log_writers_callable FROM pg_proc WHERE pronamespace = 'idem'::regnamespace AND proname = '_log_transition';
RESET idem.min_audit_retention;

-- Bug regression (review of 0.2.0): refusals wrote their audit row even in a read-only
-- transaction, so a replay on a standby or in READ ONLY failed with 25006. A read-only
-- transaction now gets its answer without the row (a refusal executes nothing).
SELECT handle AS hro, attempt AS aro FROM idem.acquire('t-audit', 'audit-key-read-only', '{"ro":1}'::jsonb) \gset
SELECT idem.complete(:'hro', :aro, 200, '{}', 'ro');
SELECT count(*) AS rows_before FROM idem.mutations WHERE client_key = 'audit-key-read-only' \gset
BEGIN READ ONLY;
SELECT outcome, convert_from(response_body, 'UTF8') AS body FROM idem.acquire('t-audit', 'audit-key-read-only', '{"ro":1}'::jsonb);
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-read-only', '{"ro":2}'::jsonb);
COMMIT;
SELECT count(*) - :rows_before AS rows_added_read_only FROM idem.mutations WHERE client_key = 'audit-key-read-only';

-- Bug regression (review of 0.2.0): a request of another mutation_type under the same key and body
-- (a refund replaying a capture) was treated as the same request. It is another request now.
SELECT handle AS hmt, attempt AS amt FROM idem.acquire('t-audit', 'audit-key-mut-type1', '{"p":1}'::jsonb, mutation_type => 'capture', lease => '50 milliseconds') \gset
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-mut-type1', '{"p":1}'::jsonb, mutation_type => 'capture');
SELECT idem.complete(:'hmt', :amt, 200, '{}', 'captured');
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-mut-type1', '{"p":1}'::jsonb, mutation_type => 'refund');
SELECT outcome FROM idem.acquire('t-audit', 'audit-key-mut-type1', '{"p":1}'::jsonb, mutation_type => 'capture');
