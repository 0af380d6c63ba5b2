-- The hot path caches per backend whether any tenant binding exists (0.3.2). Every change to
-- idem.tenant_bindings (bind_tenant, unbind_tenant, a superuser's DML or TRUNCATE) makes it ask
-- again: in this backend at once, in others by their next transaction
-- (regress/specs/binding_reaches_a_warm_backend.spec). One backend throughout: SET SESSION
-- AUTHORIZATION changes session_user, which bindings are about, without reconnecting.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_tc_svc;
RESET client_min_messages;
CREATE ROLE regress_tc_svc LOGIN IN ROLE idem_service;
TRUNCATE idem.tenant_bindings;  -- earlier tests' bindings: start from none

SET SESSION AUTHORIZATION regress_tc_svc;
SELECT outcome AS warm_and_unbound FROM idem.acquire('t-tc-globex', 'tc-key-0000000001', '{}'::jsonb);
BEGIN;
SELECT handle AS h_globex, attempt AS a_globex FROM idem.acquire('t-tc-globex', 'tc-key-0000000002', '{}'::jsonb) \gset
RESET SESSION AUTHORIZATION;
SELECT idem.bind_tenant('regress_tc_svc', 't-tc-acme') AS bound;
SET SESSION AUTHORIZATION regress_tc_svc;
-- Bound within the very transaction that warmed the cache: the binding backend sees it at once.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h_globex', :a_globex)) AS complete_refused;
SELECT expect_error($$SELECT idem.acquire('t-tc-globex', 'tc-key-0000000003', '{}'::jsonb)$$) AS acquire_refused;
SELECT outcome AS own_tenant FROM idem.acquire('t-tc-acme', 'tc-key-0000000004', '{}'::jsonb);
COMMIT;

RESET SESSION AUTHORIZATION;
SELECT idem.unbind_tenant('regress_tc_svc', 't-tc-acme') AS unbound;
SET SESSION AUTHORIZATION regress_tc_svc;
SELECT outcome AS unbound_again FROM idem.acquire('t-tc-globex', 'tc-key-0000000005', '{}'::jsonb);

RESET SESSION AUTHORIZATION;
INSERT INTO idem.tenant_bindings VALUES ('regress_tc_svc'::regrole, 't-tc-acme', current_user, now());
SET SESSION AUTHORIZATION regress_tc_svc;
SELECT expect_error($$SELECT idem.acquire('t-tc-globex', 'tc-key-0000000006', '{}'::jsonb)$$) AS bound_by_insert;

RESET SESSION AUTHORIZATION;
UPDATE idem.tenant_bindings SET tenant_id = 't-tc-globex' WHERE role_oid = 'regress_tc_svc'::regrole;
SET SESSION AUTHORIZATION regress_tc_svc;
SELECT outcome AS rebound_by_update FROM idem.acquire('t-tc-globex', 'tc-key-0000000007', '{}'::jsonb);
SELECT expect_error($$SELECT idem.acquire('t-tc-acme', 'tc-key-0000000008', '{}'::jsonb)$$) AS old_tenant_refused;

RESET SESSION AUTHORIZATION;
TRUNCATE idem.tenant_bindings;
SET SESSION AUTHORIZATION regress_tc_svc;
SELECT outcome AS unbound_by_truncate FROM idem.acquire('t-tc-acme', 'tc-key-0000000009', '{}'::jsonb);

-- Written under session_replication_role = replica (as logical replication's apply worker and
-- pg_restore --disable-triggers write), where ordinary triggers do not fire: the trigger that
-- makes backends ask again is ENABLE ALWAYS, so the binding counts (review of 0.3.2).
RESET SESSION AUTHORIZATION;
SET session_replication_role = replica;
INSERT INTO idem.tenant_bindings VALUES ('regress_tc_svc'::regrole, 't-tc-acme', current_user, now());
RESET session_replication_role;
SET SESSION AUTHORIZATION regress_tc_svc;
SELECT expect_error($$SELECT idem.acquire('t-tc-globex', 'tc-key-0000000011', '{}'::jsonb)$$) AS bound_under_replica_role;
RESET SESSION AUTHORIZATION;
TRUNCATE idem.tenant_bindings;

-- A binding rolled back leaves the backend unbound.
RESET SESSION AUTHORIZATION;
BEGIN;
SELECT idem.bind_tenant('regress_tc_svc', 't-tc-acme') AS bound_then_rolled_back;
ROLLBACK;
SET SESSION AUTHORIZATION regress_tc_svc;
SELECT outcome AS unbound_after_rollback FROM idem.acquire('t-tc-globex', 'tc-key-0000000010', '{}'::jsonb);
RESET SESSION AUTHORIZATION;
-- Nothing was written for the refused calls: only the acquired keys exist.
SELECT tenant_id, client_key, status FROM idem.keys WHERE tenant_id LIKE 't-tc-%' ORDER BY client_key;
DROP OWNED BY regress_tc_svc;
DROP ROLE regress_tc_svc;
