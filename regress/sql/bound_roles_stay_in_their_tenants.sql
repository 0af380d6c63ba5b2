-- Regressions from the security review of 0.3.1 (named after what broke): a role bound to acme
-- could still act on, probe or reconfigure other tenants through the calls below, unbind itself,
-- escape its binding by a rename, or read other tenants through a leaky condition on a view.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_br_op;
DROP ROLE IF EXISTS regress_br_svc;
DROP ROLE IF EXISTS regress_br_aud;
DROP ROLE IF EXISTS regress_br_renamed;
RESET client_min_messages;
CREATE ROLE regress_br_op LOGIN IN ROLE idem_operator;
CREATE ROLE regress_br_svc LOGIN IN ROLE idem_service;
CREATE ROLE regress_br_aud LOGIN IN ROLE idem_auditor;
SELECT idem.bind_tenant('regress_br_op', 'acme'), idem.bind_tenant('regress_br_svc', 'acme'),
       idem.bind_tenant('regress_br_aud', 'acme');
-- globex work: a released checkpointed record, a stuck lease with data, a dead letter.
SELECT handle AS gh, attempt AS ga FROM idem.acquire('globex', 'br-key-00000000001', '{}'::jsonb) \gset
SELECT idem.checkpoint(:'gh', :ga, 'charge_created', '{"charge_id":"ch_GLOBEX_SECRET_42"}') IS NOT NULL AS checkpointed;
SELECT idem.release(:'gh', :ga, 'processor timeout');
SELECT outcome FROM idem.acquire('globex', 'br-key-00000000002', '{}'::jsonb, lease => '1 millisecond');
SELECT idem.create_topic('br.events');
SELECT idem.create_consumer('br_ledger', ARRAY['br.events'], max_attempts => 1);
SELECT idem.emit('globex', 'br.events', '{"refund":1}') AS dead_event \gset
SELECT count(*) AS claimed FROM idem.claim('br_ledger', NULL, 10, '30 seconds') c
 WHERE idem.nack('br_ledger', c.event_id, c.token, 'failed') IS NOT NULL;
SELECT pg_sleep(0.02);

\c - regress_br_op
-- resolve_stuck of another tenant's released work: refused before the record is even read.
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, NULL, %L, 200)', record_of(:'gh'), 'forged')) AS resolve_other_tenant;
-- Dead letters of another tenant are not there for it (the same answer as an unknown id).
SELECT replace(expect_error(format('SELECT idem.outbox_discard(%L, %s, %L)', 'br_ledger', :dead_event, 'x')), :'dead_event', ':dead_event') AS discard_other_tenant;
SELECT replace(expect_error(format('SELECT idem.outbox_replay(%L, %s)', 'br_ledger', :dead_event)), :'dead_event', ':dead_event') AS replay_other_tenant;
-- It cannot unbind itself or its service (the last binding), bind a group role, or edit the
-- machines every tenant uses; purges act on every tenant and are refused too.
SELECT expect_error($$SELECT idem.unbind_tenant('regress_br_op', 'acme')$$) AS unbind_own_last;
SELECT expect_error($$SELECT idem.unbind_tenant('regress_br_svc', 'acme')$$) AS unbind_service_last;
SELECT expect_error($$SELECT idem.bind_tenant('idem_service', 'acme')$$) AS bind_group_role;
SELECT expect_error($$INSERT INTO idem.machine_transitions VALUES ('order', 'shipped', 'refunded', NULL, NULL)$$) AS edit_machines;
SELECT expect_error($$SELECT idem.purge_expired()$$) AS purge_expired;
SELECT expect_error($$SELECT idem.purge_audit('1 day')$$) AS purge_audit;
SELECT expect_error($$SELECT idem.purge_outbox('1 day')$$) AS purge_outbox;
\c - regress_br_aud
-- A condition that fails on other tenants' data does not run on their rows (a barrier view).
SELECT count(*) AS acme_stuck FROM idem.stuck_leases WHERE (recovery_data->>'charge_id')::int = 0;
\c - postgres
SELECT status, response_status FROM idem.keys WHERE client_key = 'br-key-00000000001';
SELECT resolved_at IS NULL AS still_dead, replay_requested_at IS NULL AS no_replay FROM idem.outbox_dead_letters WHERE event_id = :dead_event;
SELECT idem.can_transition('order', 'shipped', 'refunded') AS shipped_to_refunded;
-- A binding follows its role through a rename; a role created again under a dropped one's name
-- does not inherit its bindings.
ALTER ROLE regress_br_svc RENAME TO regress_br_renamed;
\c - regress_br_renamed
SELECT expect_error($$SELECT idem.acquire('globex', 'br-key-00000000003', '{}'::jsonb)$$) AS renamed_still_bound;
\c - postgres
DROP ROLE regress_br_renamed;
CREATE ROLE regress_br_renamed LOGIN IN ROLE idem_service;
\c - regress_br_renamed
SELECT outcome AS recreated_unbound FROM idem.acquire('globex', 'br-key-00000000004', '{}'::jsonb);
\c - postgres
-- An unbound operator removes last bindings.
SELECT idem.unbind_tenant('regress_br_op', 'acme'), idem.unbind_tenant('regress_br_aud', 'acme');
DELETE FROM idem.tenant_bindings WHERE NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.oid = role_oid);
DROP OWNED BY regress_br_op, regress_br_aud, regress_br_renamed;
DROP ROLE regress_br_op;
DROP ROLE regress_br_aud;
DROP ROLE regress_br_renamed;
