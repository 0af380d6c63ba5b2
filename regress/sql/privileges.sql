-- Privileges: a service (member of idem_service) runs the mutation functions but never touches
-- idem.keys directly; an auditor (idem_auditor) reads idem.keys but cannot acquire; anyone else
-- cannot use the schema; internal functions are closed to all of them; and a hostile search_path
-- cannot change what the SECURITY DEFINER functions do.
\set SHOW_CONTEXT never

-- Roles are cluster-wide: start clean in case an interrupted run left them behind.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_idem_svc;
DROP ROLE IF EXISTS regress_idem_audit;
DROP ROLE IF EXISTS regress_idem_nobody;
RESET client_min_messages;
CREATE ROLE regress_idem_svc NOLOGIN IN ROLE idem_service;
CREATE ROLE regress_idem_audit NOLOGIN IN ROLE idem_auditor;
CREATE ROLE regress_idem_nobody NOLOGIN;

-- What the extension grants.
SELECT r.rolname, f.fn,
       has_function_privilege(r.rolname, f.fn, 'EXECUTE') AS can_execute
  FROM (VALUES ('regress_idem_svc'), ('regress_idem_audit'), ('regress_idem_nobody')) AS r(rolname)
 CROSS JOIN (VALUES ('idem.acquire(text,text,jsonb,text,text,interval,interval,text,text)'),
                    ('idem.acquire(text,text,text,text,text,interval,interval,text,text)'),
                    ('idem.acquire(text,text,bytea,text,text,interval,interval,text,text,bytea)'),
                    ('idem.checkpoint(text,bigint,text,jsonb,boolean)'),
                    ('idem.complete(text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean)'),
                    ('idem.release(text,bigint,text,boolean)'),
                    ('idem.purge_expired(integer)'),
                    ('idem.payload_hash(jsonb,text[])'),
                    ('idem.scope_digest(text,text,text,text)'),
                    ('idem._acquire_general(text,bytea,text,bytea,text,text,interval,interval,text,text,bytea)'),
                    ('idem._holder_row(text,bigint,text)'),
                    ('idem._complete_general(text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean)'),
                    ('idem._require_durable_store()'),
                    ('idem._boundary_probe(text)')) AS f(fn)
 ORDER BY r.rolname, f.fn;
SELECT r.rolname, p.priv, has_table_privilege(r.rolname, 'idem.keys', p.priv) AS has_priv
  FROM (VALUES ('regress_idem_svc'), ('regress_idem_audit'), ('regress_idem_nobody')) AS r(rolname)
 CROSS JOIN (VALUES ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE')) AS p(priv)
 ORDER BY r.rolname, p.priv;
-- The fencing-token sequence: drawn from only inside acquire (SECURITY DEFINER); auditors may read it.
SELECT r.rolname, p.priv, has_sequence_privilege(r.rolname, 'idem.fencing_token_seq', p.priv) AS has_priv
  FROM (VALUES ('regress_idem_svc'), ('regress_idem_audit'), ('regress_idem_nobody')) AS r(rolname)
 CROSS JOIN (VALUES ('SELECT'), ('USAGE'), ('UPDATE')) AS p(priv)
 ORDER BY r.rolname, p.priv;

--
-- The service: the whole lifecycle through the functions ...
--
SET ROLE regress_idem_svc;
SELECT current_user;
SELECT outcome AS o1, handle AS h1, attempt AS pa1 FROM idem.acquire('t-priv', 'priv-key-0000001', '{"amount":1}'::jsonb) \gset
SELECT :'o1' AS outcome;
SELECT outcome FROM idem.acquire('t-priv', 'priv-key-0000001', '{"amount":1}'::jsonb);
SELECT idem.checkpoint(:'h1', :pa1, 'charge_created', '{"charge_id":"ch_1"}') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h1', :pa1, 201, '{}', 'ok', 'order-1');
SELECT outcome, response_status, response_body FROM idem.acquire('t-priv', 'priv-key-0000001', '{"amount":1}'::text);
SELECT outcome FROM idem.acquire('t-priv', 'priv-key-0000001', idem.payload_hash('{"amount":2}'::jsonb));
SELECT handle AS h2, attempt AS pa2 FROM idem.acquire('t-priv', 'priv-key-0000002', '{}'::jsonb) \gset
SELECT idem.release(:'h2', :pa2, 'timeout');
SELECT idem.purge_expired(10) >= 0 AS purge_ok;
SELECT idem.canonical_json('{"b":1,"a":2}'), octet_length(idem.scope_digest('t', '', '', 'priv-key-0000001')) AS digest_len,
       expect_error($$SELECT idem.validate_key('priv-key-0000001')$$) AS validate;
-- ... but no direct access to the table,
SELECT expect_error($$SELECT count(*) FROM idem.keys$$);
SELECT expect_error($$INSERT INTO idem.keys (tenant_id) VALUES ('t-priv')$$);
SELECT expect_error($$UPDATE idem.keys SET status = 'resolved'$$);
SELECT expect_error($$DELETE FROM idem.keys$$);
SELECT expect_error($$TRUNCATE idem.keys$$);
-- to the internal functions,
SELECT expect_error($$SELECT idem._acquire_general('t-priv', sha256('x'::bytea), 'priv-key-0000003', sha256('y'::bytea), '', '', NULL, NULL, 'reject', 'create', NULL)$$);
SELECT expect_error(format('SELECT idem._holder_row(%L, %s, %L)', :'h1', :pa1, 'complete'));
SELECT expect_error($$SELECT nextval('idem.fencing_token_seq')$$);
SELECT expect_error($$SELECT idem._require_durable_store()$$);
SELECT expect_error($$SELECT idem._boundary_probe('ok')$$);
-- or to the superuser settings that weaken the store or the key rules.
SELECT expect_error($$SET idem.allow_non_atomic_store = on$$);
SELECT expect_error($$SET idem.key_min_length = 1$$);
-- A service may turn synchronous_commit off for its session; the store then fails closed (the
-- refusal a client sees, not caught by expect_error: a caught one fails at COMMIT, see durability).
SET synchronous_commit = off;
SELECT idem.acquire('t-priv', 'priv-key-0000004', '{}'::jsonb);
RESET synchronous_commit;
RESET ROLE;

--
-- The auditor reads, and cannot mutate
--
SET ROLE regress_idem_audit;
SELECT tenant_id, client_key, status,
       attempt = CASE client_key WHEN 'priv-key-0000001' THEN :pa1 WHEN 'priv-key-0000002' THEN :pa2 END AS holder_token,
       response_status, order_id
  FROM idem.keys WHERE tenant_id = 't-priv' ORDER BY client_key;
SELECT last_value >= greatest(:pa1, :pa2) AS reads_token_seq FROM idem.fencing_token_seq;
SELECT expect_error($$SELECT idem.acquire('t-priv', 'priv-key-0000005', '{}'::jsonb)$$);
SELECT expect_error($$SELECT idem.acquire('t-priv', 'priv-key-0000005', '{}'::text)$$);
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h1', :pa1));
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'h2', :pa2));
SELECT expect_error($$SELECT idem.purge_expired()$$);
SELECT expect_error($$SELECT nextval('idem.fencing_token_seq')$$);
SELECT expect_error($$UPDATE idem.keys SET status = 'released'$$);
SELECT expect_error($$DELETE FROM idem.keys$$);
-- The pure functions are open to auditors too.
SELECT encode(idem.payload_hash('{"a":1}'::jsonb), 'hex') = encode(sha256('{"a":1}'::bytea), 'hex') AS hash_ok;
RESET ROLE;

--
-- Anyone else cannot even use the schema
--
SET ROLE regress_idem_nobody;
SELECT expect_error($$SELECT idem.acquire('t-priv', 'priv-key-0000006', '{}'::jsonb)$$);
SELECT expect_error($$SELECT idem.canonical_json('{}'::jsonb)$$);
SELECT expect_error($$SELECT count(*) FROM idem.keys$$);
RESET ROLE;
SELECT count(*) AS no_records_from_refused_calls FROM idem.keys
 WHERE client_key IN ('priv-key-0000003', 'priv-key-0000004', 'priv-key-0000005', 'priv-key-0000006');

--
-- A hostile search_path: a schema ahead of pg_catalog shadows the functions, operators and
-- table names the implementation uses; every shadow raises if it is ever called.
--
CREATE SCHEMA evil;
GRANT USAGE ON SCHEMA evil TO regress_idem_svc;
CREATE FUNCTION evil.fail() RETURNS void LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'evil shadow called'; END $$;
CREATE FUNCTION evil.pg_advisory_xact_lock(bigint) RETURNS void LANGUAGE sql AS $$ SELECT evil.fail() $$;
CREATE FUNCTION evil.pg_try_advisory_xact_lock(bigint) RETURNS boolean LANGUAGE sql AS $$ SELECT evil.fail(); SELECT false $$;
CREATE FUNCTION evil.now() RETURNS timestamptz LANGUAGE sql AS $$ SELECT evil.fail(); SELECT 'epoch'::timestamptz $$;
CREATE FUNCTION evil.clock_timestamp() RETURNS timestamptz LANGUAGE sql AS $$ SELECT evil.fail(); SELECT 'epoch'::timestamptz $$;
CREATE FUNCTION evil.current_setting(text) RETURNS text LANGUAGE sql AS $$ SELECT evil.fail(); SELECT '1 second' $$;
CREATE FUNCTION evil.encode(bytea, text) RETURNS text LANGUAGE sql AS $$ SELECT evil.fail(); SELECT 'x' $$;
CREATE FUNCTION evil.decode(text, text) RETURNS bytea LANGUAGE sql AS $$ SELECT evil.fail(); SELECT '\x00'::bytea $$;
CREATE FUNCTION evil."right"(text, integer) RETURNS text LANGUAGE sql AS $$ SELECT evil.fail(); SELECT 'x' $$;
CREATE FUNCTION evil."left"(text, integer) RETURNS text LANGUAGE sql AS $$ SELECT evil.fail(); SELECT 'x' $$;
CREATE FUNCTION evil.length(text) RETURNS integer LANGUAGE sql AS $$ SELECT evil.fail(); SELECT 0 $$;
CREATE FUNCTION evil.pg_sleep(float8) RETURNS void LANGUAGE sql AS $$ SELECT evil.fail() $$;
CREATE FUNCTION evil.bytea_ne(bytea, bytea) RETURNS boolean LANGUAGE sql AS $$ SELECT evil.fail(); SELECT false $$;
CREATE OPERATOR evil.<> (LEFTARG = bytea, RIGHTARG = bytea, FUNCTION = evil.bytea_ne);
CREATE FUNCTION evil.text_eq(text, text) RETURNS boolean LANGUAGE sql AS $$ SELECT evil.fail(); SELECT true $$;
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.text_eq);
CREATE TABLE evil.keys (LIKE idem.keys);
GRANT ALL ON evil.keys TO PUBLIC;
SET ROLE regress_idem_svc;
SET search_path = evil, pg_catalog, public;
-- The shadows work for the caller's own SQL ...
SELECT expect_error($$SELECT now()$$);
SELECT expect_error($$SELECT 'a'::text = 'a'::text$$);
-- ... and change nothing inside the extension: acquire, in_progress, checkpoint, complete,
-- replay, mismatch, release, purge behave exactly as before.
SELECT outcome AS o7, handle AS h7, attempt AS pa7, generation AS gen7
  FROM idem.acquire('t-priv', 'priv-key-0000007', '{"amount":7}'::jsonb) \gset
SELECT :'o7' AS outcome, :pa7 > greatest(:pa1, :pa2) AS new_token, :gen7 AS generation;
SELECT outcome, retry_after FROM idem.acquire('t-priv', 'priv-key-0000007', '{"amount":7}'::jsonb);
SELECT idem.checkpoint(:'h7', :pa7, 'step', '{}') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h7', :pa7, 200, '{"X":"y"}', 'seven', 'order-7');
SELECT outcome, response_status, response_headers, response_body, order_id FROM idem.acquire('t-priv', 'priv-key-0000007', '{"amount":7}'::text);
SELECT outcome FROM idem.acquire('t-priv', 'priv-key-0000007', '{"amount":8}'::jsonb);
SELECT handle AS h8, attempt AS pa8 FROM idem.acquire('t-priv', 'priv-key-0000008', '{}'::jsonb, on_busy => 'wait') \gset
SELECT idem.release(:'h8', :pa8);
SELECT idem.purge_expired(10) >= 0 AS purge_ok;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h7', :pa7), jsonb_build_object('pa7', :pa7));
RESET search_path;
RESET ROLE;
SELECT count(*) AS shadow_table_untouched FROM evil.keys;
SELECT client_key, status,
       attempt = CASE client_key WHEN 'priv-key-0000007' THEN :pa7 WHEN 'priv-key-0000008' THEN :pa8 END AS holder_token,
       response_status, order_id FROM idem.keys
 WHERE tenant_id = 't-priv' AND client_key IN ('priv-key-0000007', 'priv-key-0000008') ORDER BY client_key;

--
-- Clean up the cluster-wide roles.
--
SET client_min_messages = warning;
DROP SCHEMA evil CASCADE;
RESET client_min_messages;
DROP ROLE regress_idem_svc;
DROP ROLE regress_idem_audit;
DROP ROLE regress_idem_nobody;
