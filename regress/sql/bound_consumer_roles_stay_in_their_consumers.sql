-- Consumer binding (0.3.5, issue 20.6). Bug: any idem_consumer member could claim, ack, nack and
-- consume_once for any consumer, so one leaked credential read every tenant's events and could
-- mark another service's events applied (a silent loss for that service). Now a role bound to
-- consumers (idem.bind_consumer, by an unbound operator) acts only for them: each of those calls
-- for another consumer raises ERR_CONSUMER_FORBIDDEN (IK025) and changes nothing; an unbound role
-- acts for every consumer, as before. One backend throughout: SET SESSION AUTHORIZATION changes
-- session_user, which bindings are about, without reconnecting (so the per-backend cache of
-- "no binding exists" is exercised too).
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_cb_billing_member;
DROP ROLE IF EXISTS regress_cb_billing;
DROP ROLE IF EXISTS regress_cb_free;
DROP ROLE IF EXISTS regress_cb_svc;
DROP ROLE IF EXISTS regress_cb_op;
DROP ROLE IF EXISTS regress_cb_tenant_op;
RESET client_min_messages;
CREATE ROLE regress_cb_billing LOGIN IN ROLE idem_consumer;
CREATE ROLE regress_cb_billing_member LOGIN IN ROLE regress_cb_billing;
CREATE ROLE regress_cb_free LOGIN IN ROLE idem_consumer;
CREATE ROLE regress_cb_svc LOGIN IN ROLE idem_service;
CREATE ROLE regress_cb_op LOGIN IN ROLE idem_operator, idem_consumer;
CREATE ROLE regress_cb_tenant_op LOGIN IN ROLE idem_operator;
TRUNCATE idem.consumer_bindings;

SELECT idem.create_topic('cb.orders') AS topic_created;
SELECT idem.create_consumer('cb-billing', '{cb.orders}');
SELECT idem.create_consumer('cb-shipping', '{cb.orders}');
SELECT idem.create_consumer('cb-search', '{cb.orders}');
-- Two events, two tenants (each emit commits on its own: its commit row is drawn at COMMIT).
CREATE TABLE cb_events (name text PRIMARY KEY, event_id bigint);
INSERT INTO cb_events SELECT 'e_acme', idem.emit('cb-acme', 'cb.orders', '{"order":"o-1"}');
INSERT INTO cb_events SELECT 'e_globex', idem.emit('cb-globex', 'cb.orders', '{"order":"o-2"}');
CREATE FUNCTION cb_ev(p_name text) RETURNS bigint LANGUAGE sql STABLE AS $$ SELECT event_id FROM cb_events WHERE name = p_name $$;
-- cb_claims: what each claim handed out (tokens are random: compared, never printed).
CREATE TABLE cb_claims (label text, consumer text, event text, tenant_id text, token uuid);
CREATE FUNCTION cb_take(p_label text, p_consumer text) RETURNS TABLE (event text, tenant_id text)
  LANGUAGE sql AS $$
  WITH c AS (SELECT * FROM idem.claim(p_consumer)),
       i AS (INSERT INTO cb_claims SELECT p_label, p_consumer, e.name, c.tenant_id, c.token
               FROM c JOIN cb_events e ON e.event_id = c.event_id RETURNING *)
  SELECT i.event, i.tenant_id FROM i ORDER BY i.event $$;
CREATE FUNCTION cb_tok(p_label text) RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT min(token::text)::uuid FROM cb_claims WHERE label = p_label $$;
GRANT SELECT, INSERT ON cb_events, cb_claims TO regress_cb_billing, regress_cb_free, regress_cb_op;
-- cb_state(): every outbox delivery table's rows, digested (and counted), to prove a refused
-- call changed nothing.
CREATE FUNCTION cb_state() RETURNS text LANGUAGE sql AS $$
  SELECT md5(concat_ws('|',
    (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM idem.outbox_cursors x),
    (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM idem.outbox_cursor_states x),
    (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM idem.outbox_consumed x),
    (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM idem.outbox_dead_letters x),
    (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM idem.outbox_subscriptions x))) $$;
CREATE VIEW cb_counts AS
SELECT (SELECT count(*) FROM idem.outbox_cursors WHERE consumer LIKE 'cb-%') AS cursors,
       (SELECT count(*) FROM idem.outbox_cursor_states WHERE consumer LIKE 'cb-%') AS cursor_states,
       (SELECT count(*) FROM idem.outbox_consumed WHERE consumer LIKE 'cb-%') AS consumed,
       (SELECT count(*) FROM idem.outbox_dead_letters WHERE consumer LIKE 'cb-%') AS dead_letters;

-- Before any binding: one consumer role claims for any consumer (0.3.4 stops here for good).
SET SESSION AUTHORIZATION regress_cb_free;
SELECT * FROM cb_take('ship1', 'cb-shipping');
RESET SESSION AUTHORIZATION;

-- Binding: by operators only, to a role and a consumer that exist.
SELECT idem.bind_consumer('regress_cb_billing', 'cb-billing') AS bound,
       idem.bind_consumer('regress_cb_billing', 'cb-billing') AS again;
SELECT expect_error($$SELECT idem.bind_consumer('regress_cb_nosuchrole', 'cb-billing')$$) AS unknown_role;
SELECT expect_error($$SELECT idem.bind_consumer('regress_cb_billing', 'cb-nosuch')$$) AS unknown_consumer;
SELECT role_oid::regrole AS role, consumer, bound_by = session_user AS by_me FROM idem.consumer_bindings;
SELECT r.rolname, has_function_privilege(r.rolname, 'idem.bind_consumer(name,text)', 'EXECUTE') AS may_bind,
       has_function_privilege(r.rolname, 'idem.unbind_consumer(name,text)', 'EXECUTE') AS may_unbind,
       has_table_privilege(r.rolname, 'idem.consumer_bindings', 'SELECT') AS reads_bindings,
       has_table_privilege(r.rolname, 'idem.consumer_bindings', 'INSERT') AS writes_bindings
  FROM (VALUES ('idem_service'), ('idem_consumer'), ('idem_auditor'), ('idem_operator'), ('public')) AS r(rolname)
 ORDER BY 1;
-- A service (or consumer) role may not bind, not even itself, nor write the table.
SET SESSION AUTHORIZATION regress_cb_svc;
SELECT expect_error($$SELECT idem.bind_consumer('regress_cb_svc', 'cb-billing')$$) AS service_binds;
SELECT expect_error($$SELECT idem.unbind_consumer('regress_cb_billing', 'cb-billing')$$) AS service_unbinds;
SET SESSION AUTHORIZATION regress_cb_billing;
SELECT expect_error($$SELECT idem.unbind_consumer('regress_cb_billing', 'cb-billing')$$) AS consumer_unbinds_itself;
SELECT expect_error($$DELETE FROM idem.consumer_bindings$$) AS consumer_deletes_bindings;
RESET SESSION AUTHORIZATION;

-- The bound role, for another consumer, with a real claim token of that consumer: refused with
-- IK025 on every call, and nothing changed (an unknown consumer is refused the same way, before
-- it is looked up).
SELECT cb_state() AS s0 \gset
SELECT * FROM cb_counts;
SET SESSION AUTHORIZATION regress_cb_billing;
SELECT expect_error($$SELECT * FROM idem.claim('cb-shipping')$$) AS claim_other;
SELECT expect_error($$SELECT * FROM idem.claim('cb-shipping', '{cb.orders}', 1, '1 second')$$) AS claim_other_topics;
SELECT expect_error($$SELECT * FROM idem.claim('cb-nosuch')$$) AS claim_unknown;
SELECT expect_error(format('SELECT idem.ack(%L, ARRAY[%s, %s], %L)', 'cb-shipping', cb_ev('e_acme'), cb_ev('e_globex'), cb_tok('ship1'))) AS ack_other;
SELECT expect_error(format('SELECT idem.ack(%L, %s, %L)', 'cb-shipping', cb_ev('e_acme'), cb_tok('ship1'))) AS ack_other_single;
SELECT expect_error(format('SELECT idem.nack(%L, %s, %L, %L)', 'cb-shipping', cb_ev('e_acme'), cb_tok('ship1'), 'forged failure')) AS nack_other;
SELECT expect_error(format('SELECT idem.consume_once(%L, %s, %L)', 'cb-shipping', cb_ev('e_acme'), cb_tok('ship1'))) AS consume_once_other;
SELECT expect_error(format('SELECT idem.consume_once(%L, %s)', 'cb-shipping', cb_ev('e_globex'))) AS consume_once_other_unfenced;
RESET SESSION AUTHORIZATION;
SELECT cb_state() = :'s0' AS unchanged, * FROM cb_counts;
-- A member of the bound role is bound too.
SET SESSION AUTHORIZATION regress_cb_billing_member;
SELECT expect_error($$SELECT * FROM idem.claim('cb-search')$$) AS member_claim_other;
RESET SESSION AUTHORIZATION;
SELECT cb_state() = :'s0' AS unchanged;

-- For its own consumer the bound role works as before: claim, consume_once, ack, nack.
SET SESSION AUTHORIZATION regress_cb_billing;
SELECT * FROM cb_take('bill1', 'cb-billing');
SELECT idem.consume_once('cb-billing', cb_ev('e_acme'), cb_tok('bill1')) AS applied,
       idem.consume_once('cb-billing', cb_ev('e_acme'), cb_tok('bill1')) AS applied_again;
SELECT idem.ack('cb-billing', ARRAY[cb_ev('e_acme')], cb_tok('bill1')) AS acked;
SELECT idem.nack('cb-billing', cb_ev('e_globex'), cb_tok('bill1'), 'try later', '0') AS nacked;
RESET SESSION AUTHORIZATION;
SELECT consumer, tenant_id, count(*) AS consumed FROM idem.outbox_consumed WHERE consumer LIKE 'cb-%' GROUP BY 1, 2 ORDER BY 1, 2;

-- An unbound role keeps today's behaviour: it finishes shipping's claim and claims for search.
SET SESSION AUTHORIZATION regress_cb_free;
SELECT idem.consume_once('cb-shipping', cb_ev('e_acme'), cb_tok('ship1')) AS applied;
SELECT idem.ack('cb-shipping', ARRAY[cb_ev('e_acme'), cb_ev('e_globex')], cb_tok('ship1')) AS acked;
SELECT * FROM cb_take('search1', 'cb-search');
RESET SESSION AUTHORIZATION;
SELECT consumer, topic, backlog FROM idem.outbox_lag WHERE consumer LIKE 'cb-%' ORDER BY 1;

-- Who manages consumer bindings: an unbound operator. A tenant-bound operator may not (a
-- consumer sees every tenant's events), nor may an operator bound to consumers, which also
-- adds topics, replays and discards only for its own consumers.
SELECT idem.bind_tenant('regress_cb_tenant_op', 'cb-acme') AS tenant_op_bound;
SET SESSION AUTHORIZATION regress_cb_tenant_op;
SELECT expect_error($$SELECT idem.bind_consumer('regress_cb_free', 'cb-search')$$) AS tenant_bound_operator_binds;
RESET SESSION AUTHORIZATION;
SELECT idem.unbind_tenant('regress_cb_tenant_op', 'cb-acme') AS tenant_op_unbound;
SELECT idem.bind_consumer('regress_cb_op', 'cb-search') AS op_bound;
SET SESSION AUTHORIZATION regress_cb_op;
SELECT expect_error($$SELECT idem.bind_consumer('regress_cb_free', 'cb-search')$$) AS consumer_bound_operator_binds;
SELECT expect_error($$SELECT idem.unbind_consumer('regress_cb_op', 'cb-search')$$) AS consumer_bound_operator_unbinds_itself;
SELECT expect_error($$SELECT idem.create_consumer('cb-shipping', '{cb.orders}', 9)$$) AS create_other_consumer;
SELECT expect_error(format('SELECT idem.outbox_replay(%L, %s)', 'cb-shipping', cb_ev('e_acme'))) AS replay_other;
SELECT expect_error(format('SELECT idem.outbox_discard(%L, %s, %L)', 'cb-shipping', cb_ev('e_acme'), 'x')) AS discard_other;
SELECT expect_error($$SELECT idem.create_consumer('cb-search', '{cb.orders}', 7)$$) AS create_own_consumer;
RESET SESSION AUTHORIZATION;
SELECT consumer, max_attempts FROM idem.outbox_consumers WHERE consumer LIKE 'cb-%' ORDER BY 1;

-- The cache of "no binding exists" follows the table in a warm backend: unbound, then bound by a
-- superuser's INSERT in this very backend, then unbound by TRUNCATE.
SELECT idem.unbind_consumer('regress_cb_billing', 'cb-billing') AS unbound,
       idem.unbind_consumer('regress_cb_billing', 'cb-billing') AS again,
       idem.unbind_consumer('regress_cb_op', 'cb-search') AS op_unbound;
SELECT count(*) AS bindings_left FROM idem.consumer_bindings;
INSERT INTO cb_events SELECT 'e_initech', idem.emit('cb-initech', 'cb.orders', '{"order":"o-3"}');
SET SESSION AUTHORIZATION regress_cb_billing;
SELECT * FROM cb_take('search2', 'cb-search');
RESET SESSION AUTHORIZATION;
INSERT INTO idem.consumer_bindings VALUES ('regress_cb_billing'::regrole, 'cb-billing', current_user, now());
SET SESSION AUTHORIZATION regress_cb_billing;
SELECT expect_error($$SELECT * FROM idem.claim('cb-search')$$) AS bound_by_insert;
RESET SESSION AUTHORIZATION;
TRUNCATE idem.consumer_bindings;
INSERT INTO cb_events SELECT 'e_umbrella', idem.emit('cb-umbrella', 'cb.orders', '{"order":"o-4"}');
SET SESSION AUTHORIZATION regress_cb_billing;
SELECT * FROM cb_take('search3', 'cb-search');
RESET SESSION AUTHORIZATION;

DROP VIEW cb_counts;
DROP FUNCTION cb_state(), cb_take(text, text), cb_tok(text), cb_ev(text);
DROP TABLE cb_events, cb_claims;
DROP ROLE regress_cb_billing_member;
DROP ROLE regress_cb_billing;
DROP ROLE regress_cb_free;
DROP ROLE regress_cb_svc;
DROP ROLE regress_cb_op;
DROP ROLE regress_cb_tenant_op;
