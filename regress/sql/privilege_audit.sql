-- The privilege audit (issue 12): every SECURITY DEFINER function pins search_path, and so does
-- every SQL or PL/pgSQL function of ours; PUBLIC may execute nothing of ours; no table or
-- sequence of ours is writable by a service or consumer role; a hostile search_path with
-- shadowing overloads in the caller's schemas changes nothing the extension does.
\set SHOW_CONTEXT never
SELECT p.oid::regprocedure AS definer_without_search_path
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'idem' AND p.prosecdef
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c = 'search_path=pg_catalog, pg_temp');
SELECT p.oid::regprocedure AS sql_function_without_search_path
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
 WHERE n.nspname = 'idem' AND l.lanname IN ('sql', 'plpgsql')
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%');
SELECT p.oid::regprocedure AS public_may_execute
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'idem' AND has_function_privilege('public', p.oid, 'EXECUTE');
-- The internal functions (a leading underscore) a service or consumer role may execute: none.
SELECT r.rolname, p.oid::regprocedure AS internal_executable
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 CROSS JOIN (VALUES ('idem_service'), ('idem_consumer')) r(rolname)
 WHERE n.nspname = 'idem' AND p.proname LIKE '\_%' AND has_function_privilege(r.rolname, p.oid, 'EXECUTE')
 ORDER BY 1, 2;
SELECT r.rolname, c.oid::regclass AS writable, p.priv
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 CROSS JOIN (VALUES ('idem_service'), ('idem_consumer')) r(rolname)
 CROSS JOIN (VALUES ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE')) p(priv)
 WHERE n.nspname = 'idem' AND c.relkind IN ('r', 'p') AND has_table_privilege(r.rolname, c.oid, p.priv);
SELECT r.rolname, c.oid::regclass AS sequence_usable
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 CROSS JOIN (VALUES ('idem_service'), ('idem_consumer')) r(rolname)
 WHERE n.nspname = 'idem' AND c.relkind = 'S'
   AND (has_sequence_privilege(r.rolname, c.oid, 'USAGE') OR has_sequence_privilege(r.rolname, c.oid, 'UPDATE'));

-- A hostile caller: shadows of what our SQL functions use, first on its search_path.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS hostile CASCADE;
DROP ROLE IF EXISTS regress_hostile;
RESET client_min_messages;
CREATE ROLE regress_hostile LOGIN IN ROLE idem_service, idem_auditor;
CREATE SCHEMA hostile AUTHORIZATION regress_hostile;
SET ROLE regress_hostile;
CREATE FUNCTION hostile.count(anyelement) RETURNS bigint LANGUAGE sql AS 'SELECT 42::bigint';
CREATE FUNCTION hostile.array_agg(text) RETURNS text[] LANGUAGE sql AS $$SELECT ARRAY['pwned']$$;
CREATE FUNCTION hostile.sha256(bytea) RETURNS bytea LANGUAGE sql AS $$SELECT '\x00'::bytea$$;
CREATE FUNCTION hostile.clock_timestamp() RETURNS timestamptz LANGUAGE sql AS $$SELECT '2000-01-01'::timestamptz$$;
CREATE FUNCTION hostile.texteq_evil(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR hostile.= (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.texteq_evil);
SET search_path = hostile, pg_catalog;
SELECT handle AS h, attempt AS a FROM idem.acquire('t-hostile', 'hostile-key-000001', '{"n":1}'::jsonb) \gset
SELECT idem.checkpoint(:'h', :a, 'charge_created', '{"charge_id":"ch_h1"}') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h', :a, 201, '{}', 'done', 'ord_h1', '{"charge_id":"ch_h1"}');
SELECT outcome, convert_from(response_body, 'UTF8') AS body FROM idem.acquire('t-hostile', 'hostile-key-000001', '{"n":1}'::jsonb);
SELECT outcome FROM idem.acquire('t-hostile', 'hostile-key-000001', '{"n":2}'::jsonb);
SELECT outcome FROM idem.acquire('t-other', 'hostile-key-000001', '{"n":1}'::jsonb);
-- (The caller's own WHERE would use its shadowing '=': name the real one.)
SELECT count(*) AS double_charges_of_t_hostile FROM idem.double_charges() d WHERE d.tenant_id OPERATOR(pg_catalog.=) 't-hostile';
SELECT outcome, order_id FROM idem.key_history('t-hostile', 'hostile-key-000001') ORDER BY mutation_id;
RESET search_path;
RESET ROLE;
-- What was stored is what an unshadowed session sees.
SELECT tenant_id, status, order_id, lease_secret_hash = sha256(convert_to(right(:'h', 32), 'UTF8')) AS real_hash,
       resolved_at > '2001-01-01' AS real_clock
  FROM idem.keys WHERE tenant_id = 't-hostile';
DROP SCHEMA hostile CASCADE;
DROP OWNED BY regress_hostile;
DROP ROLE regress_hostile;
