-- The operator's stuck-work path (0.3.5, issue 20.7). Bugs: idem.stuck_leases was empty while a
-- dead holder's lease still ran (30 s by default), exactly when the runbook sends the operator
-- there ("a retry keeps getting 409"); and the only remedy, resolve_stuck, replays a body the
-- operator types, so the order and its event were never made. Now the view shows every unresolved
-- attempt (lease end, age, recovery point, the processor's key, overdue or not), and
-- idem.retry_stuck ends the lease so that the service's next request resumes at the recovery
-- point and finishes the work itself. docs/runbook.md copies its queries from this file.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_st_svc;
DROP ROLE IF EXISTS regress_st_con;
DROP ROLE IF EXISTS regress_st_auditor;
DROP ROLE IF EXISTS regress_st_other_auditor;
DROP ROLE IF EXISTS regress_st_op;
DROP ROLE IF EXISTS regress_st_other_op;
RESET client_min_messages;
CREATE ROLE regress_st_svc LOGIN IN ROLE idem_service;
CREATE ROLE regress_st_con LOGIN IN ROLE idem_consumer;
CREATE ROLE regress_st_auditor LOGIN IN ROLE idem_auditor;
CREATE ROLE regress_st_other_auditor LOGIN IN ROLE idem_auditor;
CREATE ROLE regress_st_op LOGIN IN ROLE idem_operator;
CREATE ROLE regress_st_other_op LOGIN IN ROLE idem_operator;
SELECT idem.bind_tenant('regress_st_other_auditor', 't-stuck-path-other') AND idem.bind_tenant('regress_st_other_op', 't-stuck-path-other') AS bound;
SELECT idem.create_topic('st.orders') AS topic_created;
-- The service's business table: an order row and its event are what resolve_stuck never makes.
CREATE TABLE st_orders (order_id text PRIMARY KEY, charge_id text NOT NULL);
GRANT INSERT, SELECT ON st_orders TO regress_st_svc;
-- st_record(): every t-stuck-path record and operator action, digested, to prove a refusal changed nothing.
CREATE FUNCTION st_record() RETURNS text LANGUAGE sql AS $$
  SELECT md5(concat_ws('|', (SELECT string_agg(k::text, ',' ORDER BY k.client_key) FROM idem.keys k WHERE k.tenant_id = 't-stuck-path'),
                            (SELECT count(*) FROM idem.operator_actions))) $$;

-- Work in every state, by the service.
SET SESSION AUTHORIZATION regress_st_svc;
-- A: the checkout pod charged (checkpoint) and died; its lease (1 hour) still runs.
SELECT handle AS h_a, attempt AS a_a FROM idem.acquire('t-stuck-path', 'stuck-pod-died-0001', '{"cart":"a"}'::jsonb, lease => '1 hour') \gset
SELECT idem.checkpoint(:'h_a', :a_a, 'charge_created', '{"charge_id":"ch_A"}') IS NOT NULL AS checkpointed;
-- B: died before any checkpoint; lease ran out, not taken over.
SELECT handle AS h_b, attempt AS a_b FROM idem.acquire('t-stuck-path', 'stuck-no-checkpt-01', '{"cart":"b"}'::jsonb, lease => '50 milliseconds') \gset
-- C: released after a checkpoint (a processor timeout after the charge).
SELECT handle AS h_c, attempt AS a_c FROM idem.acquire('t-stuck-path', 'stuck-released-0001', '{"cart":"c"}'::jsonb) \gset
SELECT idem.checkpoint(:'h_c', :a_c, 'charge_created', '{"charge_id":"ch_C"}') IS NOT NULL AS checkpointed;
SELECT idem.release(:'h_c', :a_c, 'processor timeout');
-- D: charged, lease ran out; the service that would finish it is gone (resolve_stuck's case).
SELECT handle AS h_d, attempt AS a_d FROM idem.acquire('t-stuck-path', 'stuck-no-service-01', '{"cart":"d"}'::jsonb, lease => '50 milliseconds') \gset
SELECT idem.checkpoint(:'h_d', :a_d, 'charge_created', '{"charge_id":"ch_7"}') IS NOT NULL AS checkpointed;
-- E: released before any checkpoint (its next request is a fresh attempt): not stuck.
SELECT handle AS h_e, attempt AS a_e FROM idem.acquire('t-stuck-path', 'stuck-fresh-0000001', '{"cart":"e"}'::jsonb) \gset
SELECT idem.release(:'h_e', :a_e, 'transient');
-- F: resolved: not stuck.
SELECT handle AS h_f, attempt AS a_f FROM idem.acquire('t-stuck-path', 'stuck-done-00000001', '{"cart":"f"}'::jsonb) \gset
SELECT idem.complete(:'h_f', :a_f, 201, '{}', 'done');
-- G: lease and TTL ran out, no checkpoint: history (its next request starts a new generation).
SELECT handle AS h_g, attempt AS a_g FROM idem.acquire('t-stuck-path', 'stuck-expired-00001', '{"cart":"g"}'::jsonb, lease => '50 milliseconds', ttl => '50 milliseconds') \gset
-- H: leased for an hour, checkpointed; its holder is alive after all.
SELECT handle AS h_h, attempt AS a_h FROM idem.acquire('t-stuck-path', 'stuck-alive-0000001', '{"cart":"h"}'::jsonb, lease => '1 hour') \gset
SELECT idem.checkpoint(:'h_h', :a_h, 'charge_created', '{"charge_id":"ch_H"}') IS NOT NULL AS checkpointed;
RESET SESSION AUTHORIZATION;
SELECT pg_sleep(0.2);

-- "A retry keeps getting 409": every unresolved attempt, the live leases too (0.3.4 listed only
-- B, C, D and G), not E or F.
SELECT client_key, status, overdue, recovery_point, recovery_data, handler_key, why FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path' ORDER BY client_key;
-- Lease end, age and attempt are the record's; handler_key is the processor's key of the generation.
SELECT s.client_key, s.lease_expires_at IS NOT DISTINCT FROM k.lease_expires_at AS lease_end,
       s.age BETWEEN interval '0.2 s' AND interval '1 hour' AS age, s.attempt = k.attempt AS attempt,
       s.handler_key = idem._handler_key(k.scope_digest, k.generation) AS processor_key
  FROM idem.stuck_leases s JOIN idem.keys k ON k.tenant_id = s.tenant_id AND k.client_key = s.client_key
 WHERE s.tenant_id = 't-stuck-path' ORDER BY 1;

-- Who reads it: auditors and operators (the processor key column too); no service, consumer or
-- PUBLIC, which may not compute processor keys either.
SELECT r.rolname, has_table_privilege(r.rolname, 'idem.stuck_leases', 'SELECT') AS reads_view,
       has_column_privilege(r.rolname, 'idem.stuck_leases', 'handler_key', 'SELECT') AS reads_handler_key,
       has_function_privilege(r.rolname, 'idem._handler_key(bytea,integer)', 'EXECUTE') AS computes_handler_key,
       has_function_privilege(r.rolname, 'idem.retry_stuck(text,bigint,text)', 'EXECUTE') AS may_retry
  FROM (VALUES ('idem_service'), ('idem_consumer'), ('idem_auditor'), ('idem_operator'), ('public')) AS r(rolname)
 ORDER BY 1;
SET SESSION AUTHORIZATION regress_st_auditor;
SELECT count(*) AS auditor_rows, count(handler_key) AS with_processor_key FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path';
SET SESSION AUTHORIZATION regress_st_op;
SELECT count(*) AS operator_rows, count(handler_key) AS with_processor_key FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path';
-- Bound to another tenant: none of t-stuck-path's rows.
SET SESSION AUTHORIZATION regress_st_other_auditor;
SELECT count(*) AS other_tenant_auditor_rows FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path';
SET SESSION AUTHORIZATION regress_st_svc;
SELECT expect_error($$SELECT count(*) FROM idem.stuck_leases$$) AS service_reads;
SELECT expect_error($$SELECT idem._handler_key('\x00'::bytea, 1)$$) AS service_computes_processor_key;
SELECT expect_error(format('SELECT * FROM idem.retry_stuck(%L)', record_of(:'h_a'))) AS service_retries;
SET SESSION AUTHORIZATION regress_st_con;
SELECT expect_error($$SELECT count(*) FROM idem.stuck_leases$$) AS consumer_reads;
RESET SESSION AUTHORIZATION;

-- retry_stuck refuses what is not stuck, a moved-on attempt and another tenant's record; it
-- changes nothing then.
SELECT st_record() AS r0 \gset
SET SESSION AUTHORIZATION regress_st_op;
SELECT expect_error(format('SELECT * FROM idem.retry_stuck(%L)', record_of(:'h_e'))) AS released_before_checkpoint;
SELECT regexp_replace(expect_error(format('SELECT * FROM idem.retry_stuck(%L)', record_of(:'h_f'))), 'at .* and', 'at <time> and') AS resolved;
SELECT regexp_replace(expect_error(format('SELECT * FROM idem.retry_stuck(%L)', record_of(:'h_g'))), 'at .*, and', 'at <time>, and') AS expired;
SELECT expect_error(format('SELECT * FROM idem.retry_stuck(%L)', 't-stuck-path:' || repeat('ab', 32))) AS absent;
SELECT expect_error($$SELECT * FROM idem.retry_stuck('not a handle')$$) AS malformed;
SELECT expect_error(format('SELECT * FROM idem.retry_stuck(%L, %s)', record_of(:'h_a'), :a_a + 1000000), jsonb_build_object('a_a', :a_a, 'wrong', :a_a + 1000000)) AS wrong_attempt;
SET SESSION AUTHORIZATION regress_st_other_op;
SELECT expect_error(format('SELECT * FROM idem.retry_stuck(%L)', record_of(:'h_a'))) AS other_tenant;
RESET SESSION AUTHORIZATION;
SELECT st_record() = :'r0' AS unchanged;

-- The runbook's path for A: the holder died while its lease runs. retry_stuck first (by an
-- operator, logged): the lease ends now.
SET SESSION AUTHORIZATION regress_st_op;
SELECT handle AS h, attempt AS ra FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path' AND client_key = 'stuck-pod-died-0001' \gset
SELECT retried_attempt = :ra AS retried, status, recovery_point FROM idem.retry_stuck(:'h', :ra, 'checkout pod died mid-charge');
SELECT client_key, status, overdue, why FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path' AND client_key = 'stuck-pod-died-0001';
SELECT action, attempt = :ra AS attempt, recovery_point, recovery_data, response_status, reason, performed_by
  FROM idem.operator_actions WHERE tenant_id = 't-stuck-path' ORDER BY action_id;
RESET SESSION AUTHORIZATION;
SELECT lease_expires_at <= clock_timestamp() AS lease_ended, status FROM idem.keys WHERE tenant_id = 't-stuck-path' AND client_key = 'stuck-pod-died-0001';
-- The service's next request with the key resumes at the recovery point and finishes the work
-- itself: verifies the charge, creates the order, emits its event, completes, in one transaction.
SET SESSION AUTHORIZATION regress_st_svc;
BEGIN;
SELECT outcome, handle AS h_a2, attempt AS a_a2, recovery_point, recovery_data ->> 'charge_id' AS charge
  FROM idem.acquire('t-stuck-path', 'stuck-pod-died-0001', '{"cart":"a"}'::jsonb) \gset
SELECT :'outcome' AS outcome, :'recovery_point' AS recovery_point, :'charge' AS charge, :a_a2 > :a_a AS new_token;
-- The old holder, had it lived on, is fenced off from the takeover on.
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'h_a', :a_a, 'late'), jsonb_build_object('a_a', :a_a, 'a_a2', :a_a2)) AS old_checkpoint;
INSERT INTO st_orders VALUES ('ord-stuck-a', :'charge');
SELECT idem.emit('t-stuck-path', 'st.orders', jsonb_build_object('order_id', 'ord-stuck-a', 'charge_id', :'charge')) > 0 AS emitted;
SELECT idem.complete(:'h_a2', :a_a2, 201, '{}', convert_to('{"order":"ord-stuck-a"}', 'UTF8'), 'ord-stuck-a', jsonb_build_object('charge_id', :'charge'));
COMMIT;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 201, NULL, NULL)', :'h_a', :a_a), jsonb_build_object('a_a', :a_a, 'a_a2', :a_a2)) AS old_complete;
SELECT outcome, response_status, convert_from(response_body, 'UTF8') AS body, order_id
  FROM idem.acquire('t-stuck-path', 'stuck-pod-died-0001', '{"cart":"a"}'::jsonb);
RESET SESSION AUTHORIZATION;
SELECT * FROM st_orders;
SELECT tenant_id, topic, payload FROM idem.outbox_events WHERE topic = 'st.orders';
SELECT count(*) AS a_still_stuck FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path' AND client_key = 'stuck-pod-died-0001';

-- H: a holder that is alive after all keeps the key if it acts before a retry arrives: its
-- checkpoint leases it again (a request then gets in_progress), and it completes; nothing runs twice.
SELECT status FROM idem.retry_stuck(record_of(:'h_h'));
SET SESSION AUTHORIZATION regress_st_svc;
SELECT idem.checkpoint(:'h_h', :a_h, 'charge_verified', '{"charge_id":"ch_H"}') IS NOT NULL AS leased_again;
SELECT outcome FROM idem.acquire('t-stuck-path', 'stuck-alive-0000001', '{"cart":"h"}'::jsonb);
SELECT idem.complete(:'h_h', :a_h, 201, '{}', 'order h', 'ord-stuck-h');
SELECT outcome, convert_from(response_body, 'UTF8') AS body FROM idem.acquire('t-stuck-path', 'stuck-alive-0000001', '{"cart":"h"}'::jsonb);
RESET SESSION AUTHORIZATION;

-- B (lease already over) keeps its lease end; C (released after a checkpoint) resumes already:
-- both are accepted and logged, and their next requests resume.
SELECT status, recovery_point, resumable_at = (SELECT lease_expires_at FROM idem.keys WHERE tenant_id = 't-stuck-path' AND client_key = 'stuck-no-checkpt-01') AS kept_lease_end
  FROM idem.retry_stuck(record_of(:'h_b'), :a_b);
SELECT status, recovery_point FROM idem.retry_stuck(record_of(:'h_c'), NULL, '');
SELECT action, reason FROM idem.operator_actions WHERE tenant_id = 't-stuck-path' ORDER BY action_id;
SET SESSION AUTHORIZATION regress_st_svc;
SELECT outcome, recovery_point FROM idem.acquire('t-stuck-path', 'stuck-no-checkpt-01', '{"cart":"b"}'::jsonb);
SELECT outcome, recovery_point, recovery_data FROM idem.acquire('t-stuck-path', 'stuck-released-0001', '{"cart":"c"}'::jsonb);
RESET SESSION AUTHORIZATION;

-- D: the service cannot finish it (its endpoint is gone): once the charge is verified at the
-- processor, resolve it with the response every retry should get.
SET SESSION AUTHORIZATION regress_st_op;
SELECT handle AS h, attempt AS ra FROM idem.stuck_leases WHERE tenant_id = 't-stuck-path' AND client_key = 'stuck-no-service-01' \gset
SELECT idem.resolve_stuck(:'h', :ra, 'charge ch_7 verified at the processor', 201, convert_to('{"charge":"ch_7"}', 'UTF8'), '{"Content-Type":"application/json"}');
RESET SESSION AUTHORIZATION;
SELECT outcome, response_status, convert_from(response_body, 'UTF8') AS body
  FROM idem.acquire('t-stuck-path', 'stuck-no-service-01', '{"cart":"d"}'::jsonb);
SELECT action, response_status, reason FROM idem.operator_actions WHERE tenant_id = 't-stuck-path' ORDER BY action_id;

SELECT idem.unbind_tenant('regress_st_other_auditor', 't-stuck-path-other') AND idem.unbind_tenant('regress_st_other_op', 't-stuck-path-other') AS unbound;
DROP FUNCTION st_record();
DROP TABLE st_orders;
DROP ROLE regress_st_svc;
DROP ROLE regress_st_con;
DROP ROLE regress_st_auditor;
DROP ROLE regress_st_other_auditor;
DROP ROLE regress_st_op;
DROP ROLE regress_st_other_op;
