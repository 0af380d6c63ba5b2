-- Tenant binding (0.3.1): a role bound to tenants acts only for them. Every call that names a
-- tenant (acquire, checkpoint, complete, release, handler_key, emit) refuses another tenant with
-- ERR_TENANT_FORBIDDEN and changes nothing; unbound roles and superusers act for every tenant.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_tb_acme;
DROP ROLE IF EXISTS regress_tb_acme_member;
DROP ROLE IF EXISTS regress_tb_free;
DROP ROLE IF EXISTS regress_tb_op;
RESET client_min_messages;
CREATE ROLE regress_tb_acme LOGIN IN ROLE idem_service;
CREATE ROLE regress_tb_acme_member LOGIN IN ROLE regress_tb_acme;
CREATE ROLE regress_tb_free LOGIN IN ROLE idem_service;
CREATE ROLE regress_tb_op LOGIN IN ROLE idem_operator;
SELECT idem.create_topic('tb.events');

-- Binding: by operators only; a role that does not exist is refused.
SELECT idem.bind_tenant('regress_tb_acme', 'acme') AS bound, idem.bind_tenant('regress_tb_acme', 'acme') AS again;
SELECT expect_error($$SELECT idem.bind_tenant('regress_tb_nosuchrole', 'acme')$$) AS unknown_role;
SELECT expect_error($$SELECT idem.bind_tenant('regress_tb_acme', '')$$) AS empty_tenant;
SELECT has_function_privilege('idem_service', 'idem.bind_tenant(name,text)', 'EXECUTE') AS service_may_bind,
       has_function_privilege('idem_operator', 'idem.bind_tenant(name,text)', 'EXECUTE') AS operator_may_bind;
SELECT role_oid::regrole AS role, tenant_id, bound_by = session_user AS by_me FROM idem.tenant_bindings;

-- The bound role, through its login session.
\c - regress_tb_acme
SELECT outcome, handle AS h_acme, attempt AS a_acme FROM idem.acquire('acme', 'tb-key-00000000001', '{}'::jsonb) \gset
SELECT :'outcome' AS own_tenant;
SELECT expect_error($$SELECT idem.acquire('globex', 'tb-key-00000000001', '{}'::jsonb)$$) AS other_tenant_acquire;
SELECT expect_error($$SELECT idem.acquire('globex', 'tb-key-00000000001', '{}'::text)$$) AS other_tenant_acquire_text;
SELECT expect_error($$SELECT idem.emit('globex', 'tb.events', '{}')$$) AS other_tenant_emit;
SELECT idem.emit('acme', 'tb.events', '{"n":1}') > 0 AS own_emit;
\c - postgres
-- A globex lease held by an unbound service: the bound role cannot touch it, even with its handle.
\c - regress_tb_free
SELECT handle AS h_globex, attempt AS a_globex FROM idem.acquire('globex', 'tb-key-00000000002', '{}'::jsonb) \gset
\c - regress_tb_acme
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'h_globex', :a_globex, 'x')) AS other_checkpoint;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h_globex', :a_globex)) AS other_complete;
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'h_globex', :a_globex)) AS other_release;
SELECT expect_error(format('SELECT idem.handler_key(%L, 1)', :'h_globex')) AS other_handler_key;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 201, %L, %L)', :'h_acme', :a_acme, '{}', 'own')) AS own_complete;
-- A member of the bound role is bound too.
\c - regress_tb_acme_member
SELECT expect_error($$SELECT idem.acquire('globex', 'tb-key-00000000003', '{}'::jsonb)$$) AS member_other_tenant;
SELECT outcome FROM idem.acquire('acme', 'tb-key-00000000003', '{}'::jsonb);
-- SET ROLE to a group role that has no binding does not shed the login role's.
SET ROLE idem_service;
SELECT expect_error($$SELECT idem.acquire('globex', 'tb-key-00000000007', '{}'::jsonb)$$) AS set_role_other_tenant;
RESET ROLE;
\c - postgres
-- Nothing changed for globex: its lease is still in progress under its holder, no event, no
-- audit row of the refused calls.
SELECT status, attempt = :a_globex AS same_holder FROM idem.keys WHERE tenant_id = 'globex';
SELECT tenant_id, count(*) FROM idem.outbox_events WHERE topic = 'tb.events' GROUP BY 1 ORDER BY 1;
SELECT tenant_id, client_key, outcome, count(*) FROM idem.mutations WHERE client_key LIKE 'tb-key-%' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
-- Unbound roles and superusers act for every tenant.
\c - regress_tb_free
SELECT outcome FROM idem.acquire('acme', 'tb-key-00000000004', '{}'::jsonb);
\c - postgres
SELECT outcome FROM idem.acquire('initech', 'tb-key-00000000005', '{}'::jsonb);
-- A bound operator binds only within its own tenants; unbinding frees the role again.
SELECT idem.bind_tenant('regress_tb_op', 'acme');
\c - regress_tb_op
SELECT expect_error($$SELECT idem.bind_tenant('regress_tb_free', 'globex')$$) AS bound_operator_other_tenant;
-- Nor bind a role that acts for every tenant (an unbound operator makes a role's first binding).
SELECT expect_error($$SELECT idem.bind_tenant('regress_tb_free', 'acme')$$) AS bound_operator_first_binding;
\c - postgres
SELECT idem.unbind_tenant('regress_tb_acme', 'acme') AS unbound, idem.unbind_tenant('regress_tb_acme', 'acme') AS again;
\c - regress_tb_acme
SELECT outcome FROM idem.acquire('globex', 'tb-key-00000000006', '{}'::jsonb);
\c - postgres
SELECT idem.unbind_tenant('regress_tb_op', 'acme');
DROP OWNED BY regress_tb_acme, regress_tb_acme_member, regress_tb_free, regress_tb_op;
DROP ROLE regress_tb_acme_member;
DROP ROLE regress_tb_acme;
DROP ROLE regress_tb_free;
DROP ROLE regress_tb_op;
