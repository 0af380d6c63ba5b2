-- Single-session scenarios for 0.3.3's primary-key read (diff_sql.sh runs this on 0.3.1 and 0.3.3).
\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null <null>
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.locks() RETURNS text LANGUAGE sql AS
  $$SELECT 'key locks: ' || count(*) FILTER (WHERE locktype = 'advisory') || '; rels: ' ||
           coalesce(string_agg(DISTINCT CASE WHEN locktype = 'relation' AND relation::regclass::text LIKE 'idem.%' THEN relation::regclass::text || '=' || mode END, ',' ), '')
      FROM pg_locks WHERE pid = pg_backend_pid() AND granted$$;
CREATE TABLE public.bodies(name text PRIMARY KEY, body bytea, headers jsonb);
INSERT INTO public.bodies SELECT 'random3m', (SELECT string_agg(decode(md5(random()::text || g), 'hex'), '') FROM generate_series(1, 196608) g), '{}';
INSERT INTO public.bodies SELECT 'repeat1m', convert_to(repeat('abcdefgh', 131072), 'UTF8'), (SELECT jsonb_object_agg('h' || g, repeat('v', 50)) FROM generate_series(1, 2000) g);
INSERT INTO public.bodies SELECT 'inline2k', (SELECT string_agg(decode(md5(g::text), 'hex'), '') FROM generate_series(1, 125) g), '{"a":"b"}';
INSERT INTO public.bodies SELECT 'empty', '', '{}';
INSERT INTO public.bodies SELECT 'nul_bytes', decode(repeat('00ff', 5000), 'hex'), '{"ü":"é","\\u0001":"\\ud83d\\ude00"}';
SELECT name, octet_length(body), md5(body) FROM public.bodies ORDER BY name;

\echo == T1 TOASTed bodies: complete, replay (new statement, same transaction, same statement, later transaction)
DO $$ DECLARE b record; r record; BEGIN
  FOR b IN SELECT * FROM public.bodies ORDER BY name LOOP
    SELECT * INTO r FROM idem.acquire('acme', 'toast-' || b.name || '-0000000', '{"a":1}'::jsonb);
    PERFORM idem.complete(r.handle, r.attempt, 201, b.headers, b.body, 'ord-' || b.name);
  END LOOP; END $$;
SELECT b.name, a.outcome, a.response_status, md5(a.response_body) = md5(b.body) AS body_same, octet_length(a.response_body),
       a.response_headers = b.headers AS headers_same, a.order_id
  FROM public.bodies b, LATERAL idem.acquire('acme', 'toast-' || b.name || '-0000000', '{"a":1}'::jsonb) a ORDER BY b.name;
BEGIN;
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 'toast-same-xact-01', '{"a":1}'::jsonb) \gset
SELECT idem.complete(:'h', :a, 200, (SELECT headers FROM public.bodies WHERE name = 'repeat1m'), (SELECT body FROM public.bodies WHERE name = 'random3m')) IS NULL AS completed;
SELECT outcome, md5(response_body) = (SELECT md5(body) FROM public.bodies WHERE name = 'random3m') AS same, pg_temp.locks() FROM idem.acquire('acme', 'toast-same-xact-01', '{"a":1}'::jsonb);
COMMIT;
-- complete and replay in one statement (the CTE runs first)
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 'toast-same-stmt-01', '{"a":1}'::jsonb) \gset
WITH c AS MATERIALIZED (SELECT idem.complete(:'h', :a, 202, '{}', (SELECT body FROM public.bodies WHERE name = 'random3m')) AS x)
SELECT (SELECT outcome || ' ' || (md5(response_body) = (SELECT md5(body) FROM public.bodies WHERE name = 'random3m')) FROM idem.acquire('acme', 'toast-same-stmt-01', '{"a":1}'::jsonb)) FROM c;
-- replay inside a procedure after its own COMMIT (non-atomic: SPI without its own snapshot)
CREATE PROCEDURE public.p_replay() LANGUAGE plpgsql AS $$ DECLARE r record; BEGIN
  COMMIT;
  SELECT * INTO r FROM idem.acquire('acme', 'toast-random3m-0000000', '{"a":1}'::jsonb);
  RAISE WARNING 'proc: % %', r.outcome, md5(r.response_body) = (SELECT md5(body) FROM public.bodies WHERE name = 'random3m');
  COMMIT;
  RAISE WARNING 'proc2: %', (idem.acquire('acme', 'toast-repeat1m-0000000', '{"a":1}'::jsonb)).outcome;
END $$;
SET client_min_messages = warning;
CALL public.p_replay();
-- a cursor, fetched later in the transaction
BEGIN;
DECLARE c CURSOR FOR SELECT b.name, a.outcome, md5(a.response_body) = md5(b.body) AS same FROM public.bodies b, LATERAL idem.acquire('acme', 'toast-' || b.name || '-0000000', '{"a":1}'::jsonb) a ORDER BY b.name;
FETCH 2 FROM c;
FETCH ALL FROM c;
COMMIT;

\echo == T2 tenants and keys of unusual bytes
CREATE TABLE public.tenants(n serial, t text);
INSERT INTO public.tenants(t) VALUES ('acme'), ('ACME'), ('acme '), (' acme'), (U&'\00E9'), (U&'e\0301'), ('a:b'), ('a%_\'),   ('😀'), (repeat('é', 128)), (repeat('x', 256)), (repeat('x', 255) || 'é'), (repeat('€', 85)), ('a''b'), ('\x00'), ('NULL');
SELECT t.n, a.outcome, a.generation, a.handle IS NOT NULL AS h FROM public.tenants t LEFT JOIN LATERAL (SELECT * FROM idem.acquire(t.t, 'tenant-key-0000001', '{"a":1}'::jsonb)) a ON true ORDER BY t.n;
SELECT t.n, a.outcome, a.generation FROM public.tenants t, LATERAL idem.acquire(t.t, 'tenant-key-0000001', '{"a":1}'::jsonb) a ORDER BY t.n;
SELECT t.n, a.outcome FROM public.tenants t, LATERAL idem.acquire(t.t, 'tenant-key-0000001', '{"a":2}'::jsonb) a ORDER BY t.n;
SELECT count(*), count(DISTINCT tenant_id) FROM idem.keys WHERE client_key = 'tenant-key-0000001';
SELECT outcome FROM idem.acquire('t' || chr(1), 'tenant-key-0000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire(E'tab\there', 'tenant-key-0000001', '{"a":1}'::jsonb);
-- keys of unusual bytes (whatever validate_key lets through)
SELECT k, (SELECT outcome FROM idem.acquire('acme', k, '{}'::jsonb)) o1, (SELECT outcome FROM idem.acquire('acme', k, '{}'::jsonb)) o2
  FROM unnest(ARRAY['key:with:colons-01', 'KEY-UPPER-00000001', 'key-upper-00000001', repeat('k', 128), 'key' || chr(127) || '-000000001', 'kéy-000000000001', 'key-%_\-0000000001']) k;

\echo == T3 own record: same statement, savepoints, exception blocks, subtransactions
SELECT g, a.outcome, a.generation FROM generate_series(1, 3) g, LATERAL idem.acquire('acme', 'stmt-0000000001' || left(g::text, 0), '{"a":1}'::jsonb) a;
BEGIN;
SELECT outcome FROM idem.acquire('acme', 'own-000000000001', '{"a":1}'::jsonb);
SELECT outcome, retry_after, generation FROM idem.acquire('acme', 'own-000000000001', '{"a":2}'::jsonb);
SAVEPOINT s1;
SELECT outcome FROM idem.acquire('acme', 'own-000000000002', '{"a":1}'::jsonb);
RELEASE s1;
SELECT outcome, generation FROM idem.acquire('acme', 'own-000000000002', '{"a":1}'::jsonb, on_busy => 'wait');
SAVEPOINT s2;
SELECT outcome FROM idem.acquire('acme', 'own-000000000003', '{"a":1}'::jsonb);
ROLLBACK TO s2;
SELECT outcome, generation FROM idem.acquire('acme', 'own-000000000003', '{"a":1}'::jsonb);
DO $$ DECLARE r record; BEGIN
  BEGIN
    SELECT * INTO r FROM idem.acquire('acme', 'own-000000000004', '{"a":1}'::jsonb);
    RAISE WARNING 'inner %', r.outcome;
    RAISE EXCEPTION 'boom';
  EXCEPTION WHEN others THEN RAISE WARNING 'caught %', SQLERRM;
  END;
  SELECT * INTO r FROM idem.acquire('acme', 'own-000000000004', '{"a":1}'::jsonb);
  RAISE WARNING 'after %', r.outcome;
  BEGIN
    SELECT * INTO r FROM idem.acquire('acme', 'own-000000000005', '{"a":1}'::jsonb);
    PERFORM idem.complete(r.handle, r.attempt, 200, NULL, 'x');
  END;
  SELECT * INTO r FROM idem.acquire('acme', 'own-000000000005', '{"a":1}'::jsonb);
  RAISE WARNING 'after complete in subxact: % %', r.outcome, convert_from(r.response_body, 'UTF8');
END $$;
SELECT pg_temp.locks();
COMMIT;
-- an UPDATE by hand earlier in the transaction: the record's xmin is ours
UPDATE idem.keys SET lease_expires_at = clock_timestamp() + interval '1 hour', status = 'in_progress' WHERE client_key = 'own-000000000005';
BEGIN;
UPDATE idem.keys SET attempts_in_generation = attempts_in_generation WHERE client_key = 'own-000000000005';
SELECT outcome, retry_after FROM idem.acquire('acme', 'own-000000000005', '{"a":1}'::jsonb);
SELECT outcome, retry_after FROM idem.acquire('acme', 'own-000000000005', '{"a":9}'::jsonb, on_busy => 'wait');
ROLLBACK;
SELECT outcome, retry_after FROM idem.acquire('acme', 'own-000000000005', '{"a":1}'::jsonb);
-- frozen rows
VACUUM (FREEZE) idem.keys;
SELECT outcome FROM idem.acquire('acme', 'own-000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'toast-random3m-0000000', '{"a":1}'::jsonb);

\echo == T4 isolation levels with earlier reads in the transaction
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT outcome, md5(response_body) = (SELECT md5(body) FROM public.bodies WHERE name='random3m') FROM idem.acquire('acme', 'toast-random3m-0000000', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'own-000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'rr-new-0000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'rr-new-0000000001', '{"a":1}'::jsonb);
SELECT pg_temp.locks();
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE;
SELECT outcome FROM idem.acquire('acme', 'toast-random3m-0000000', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'toast-random3m-0000000', '{"a":2}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'ser-ro-000000001', '{"a":1}'::jsonb);
SELECT pg_temp.locks();
COMMIT;
SET default_transaction_read_only = on;
SELECT outcome FROM idem.acquire('acme', 'toast-random3m-0000000', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'toast-random3m-0000000', '{"a":2}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'ro-new-000000001', '{"a":2}'::jsonb);
RESET default_transaction_read_only;

\echo == T5 relation and key locks after each outcome
BEGIN; SELECT outcome FROM idem.acquire('acme', 'lk-0000000000001', '{"a":1}'::jsonb); SELECT pg_temp.locks(); COMMIT;
BEGIN; SELECT outcome FROM idem.acquire('acme', 'lk-0000000000001', '{"a":1}'::jsonb); SELECT pg_temp.locks(); COMMIT;
BEGIN; SELECT outcome FROM idem.acquire('acme', 'toast-empty-0000000', '{"a":1}'::jsonb); SELECT pg_temp.locks(); COMMIT;
BEGIN; SELECT outcome FROM idem.acquire('acme', 'toast-empty-0000000', '{"a":3}'::jsonb); SELECT pg_temp.locks(); COMMIT;
SET idem.audit_replays = off;
BEGIN; SELECT outcome FROM idem.acquire('acme', 'toast-empty-0000000', '{"a":1}'::jsonb); SELECT pg_temp.locks(); COMMIT;
RESET idem.audit_replays;

\echo == T6 PREPARE TRANSACTION
BEGIN;
SELECT outcome FROM idem.acquire('acme', 'prep-00000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'toast-inline2k-0000000', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'toast-inline2k-0000000', '{"a":2}'::jsonb);
PREPARE TRANSACTION 'atk033_single_p1';
SELECT outcome, retry_after FROM idem.acquire('acme', 'prep-00000000001', '{"a":1}'::jsonb);
SELECT outcome, retry_after FROM idem.acquire('acme', 'prep-00000000001', '{"a":2}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'prep-00000000001', '{"a":1}'::jsonb, on_busy => 'wait');
COMMIT PREPARED 'atk033_single_p1';
SELECT outcome, retry_after FROM idem.acquire('acme', 'prep-00000000001', '{"a":1}'::jsonb);
BEGIN;
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 'prep-00000000002', '{"a":1}'::jsonb) \gset
SELECT idem.complete(:'h', :a, 200, NULL, (SELECT body FROM public.bodies WHERE name = 'random3m')) IS NULL;
SELECT outcome, md5(response_body) = (SELECT md5(body) FROM public.bodies WHERE name = 'random3m') FROM idem.acquire('acme', 'prep-00000000002', '{"a":1}'::jsonb);
PREPARE TRANSACTION 'atk033_single_p2';
SELECT outcome FROM idem.acquire('acme', 'prep-00000000002', '{"a":1}'::jsonb);
ROLLBACK PREPARED 'atk033_single_p2';
SELECT outcome FROM idem.acquire('acme', 'prep-00000000002', '{"a":1}'::jsonb);

\echo == audit trail
SELECT tenant_id, client_key, outcome, generation, attempt IS NULL AS no_attempt, order_id, retry_count FROM idem.mutations ORDER BY mutation_id;
SELECT tenant_id, client_key, status, generation, response_status, md5(response_body), order_id FROM idem.keys ORDER BY tenant_id COLLATE "C", client_key COLLATE "C";
