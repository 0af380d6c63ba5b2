-- Row-level security (0.3.1): FORCE ROW LEVEL SECURITY on every table of ours; the owner's policy
-- lets the extension work; a tenant-bound auditor reads only its tenants' keys, audit rows and
-- events; the global auditor reads all of them.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_rls_acme_auditor;
DROP ROLE IF EXISTS regress_rls_auditor;
RESET client_min_messages;
CREATE ROLE regress_rls_acme_auditor LOGIN IN ROLE idem_auditor;
CREATE ROLE regress_rls_auditor LOGIN IN ROLE idem_auditor;
SELECT idem.bind_tenant('regress_rls_acme_auditor', 'acme');
-- Every table: RLS enabled and forced, with the owner's policy.
SELECT c.oid::regclass AS table_without_forced_rls
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'idem' AND c.relkind IN ('r', 'p')
   AND NOT (c.relrowsecurity AND c.relforcerowsecurity
            AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'owner_all'));
SELECT idem.create_topic('rls.events');
SELECT handle AS ha, attempt AS aa FROM idem.acquire('acme', 'rls-key-0000000001', '{}'::jsonb) \gset
SELECT idem.complete(:'ha', :aa, 201, '{}', 'a');
SELECT handle AS hg, attempt AS ag FROM idem.acquire('globex', 'rls-key-0000000001', '{}'::jsonb) \gset
SELECT idem.complete(:'hg', :ag, 201, '{}', 'g');
-- Two leases that ran out: stuck work of each tenant.
SELECT outcome FROM idem.acquire('acme', 'rls-key-0000000002', '{}'::jsonb, lease => '1 millisecond');
SELECT outcome FROM idem.acquire('globex', 'rls-key-0000000002', '{}'::jsonb, lease => '1 millisecond');
SELECT pg_sleep(0.02);
BEGIN;
SELECT idem.emit('acme', 'rls.events', '{"n":1}') > 0 AS emitted, idem.emit('globex', 'rls.events', '{"n":2}') > 0 AS emitted;
COMMIT;
\c - regress_rls_acme_auditor
SELECT 'keys' AS t, string_agg(DISTINCT tenant_id, ',') FROM idem.keys
UNION ALL SELECT 'mutations', string_agg(DISTINCT tenant_id, ',') FROM idem.mutations
UNION ALL SELECT 'outbox_events', string_agg(DISTINCT tenant_id, ',') FROM idem.outbox_events
UNION ALL SELECT 'outbox_commits', string_agg(DISTINCT tenant_id, ',') FROM idem.outbox_commits
UNION ALL SELECT 'key_history(globex)', string_agg(DISTINCT tenant_id, ',') FROM idem.key_history('globex', 'rls-key-0000000001')
UNION ALL SELECT 'stuck_leases', string_agg(DISTINCT tenant_id, ',') FROM idem.stuck_leases WHERE client_key LIKE 'rls-key-%';
SELECT count(*) AS machine_states_readable FROM idem.machine_states WHERE machine = 'order';
SELECT expect_error($$DELETE FROM idem.keys$$) AS auditor_cannot_delete;
-- A function of its own that is cheaper than the policy's condition (so the planner would run it
-- first) and tells what it sees: RLS runs the policy first, so it sees acme's rows only.
CREATE FUNCTION pg_temp.peek(t text) RETURNS boolean LANGUAGE plpgsql COST 0.0001 AS
  $$ BEGIN RAISE NOTICE 'peek saw tenant %', t; RETURN false; END $$;
SELECT count(*) AS peeked_keys FROM idem.keys k WHERE k.client_key = 'rls-key-0000000001' AND pg_temp.peek(k.tenant_id);
SELECT count(*) AS peeked_mutations FROM idem.mutations m WHERE m.client_key = 'rls-key-0000000001'
   AND pg_temp.peek(m.tenant_id);
\c - regress_rls_auditor
SELECT 'keys' AS t, string_agg(DISTINCT tenant_id, ',' ORDER BY tenant_id) FROM idem.keys WHERE client_key LIKE 'rls-key-%'
UNION ALL SELECT 'mutations', string_agg(DISTINCT tenant_id, ',' ORDER BY tenant_id) FROM idem.mutations WHERE client_key LIKE 'rls-key-%'
UNION ALL SELECT 'outbox_events', string_agg(DISTINCT tenant_id, ',' ORDER BY tenant_id) FROM idem.outbox_events WHERE topic = 'rls.events'
UNION ALL SELECT 'stuck_leases', string_agg(DISTINCT tenant_id, ',' ORDER BY tenant_id) FROM idem.stuck_leases WHERE client_key LIKE 'rls-key-%';
\c - postgres
SELECT idem.unbind_tenant('regress_rls_acme_auditor', 'acme');
DROP OWNED BY regress_rls_acme_auditor, regress_rls_auditor;
DROP ROLE regress_rls_acme_auditor;
DROP ROLE regress_rls_auditor;
