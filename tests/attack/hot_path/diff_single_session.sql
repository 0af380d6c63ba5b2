-- Single-session calls, run by diff_single_session.sh against 0.3.1 (PL/pgSQL reference) and
-- 0.3.2 (C fast path); the outputs are normalized and diffed.
\set VERBOSITY verbose
\set SHOW_CONTEXT never
\pset null <null>
CREATE FUNCTION pg_temp.locks() RETURNS text LANGUAGE sql AS
  $$SELECT 'key locks held: ' || count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 3 AND pid = pg_backend_pid() AND granted$$;
CREATE FUNCTION pg_temp.rowlocked(k text) RETURNS text LANGUAGE sql AS
  $$SELECT 'row ' || k || ': ' || coalesce((SELECT status || ' xmax_set=' || (xmax::text <> '0') FROM idem.keys WHERE client_key = k), 'absent')$$;
\echo == 1 new key, lock held after
BEGIN;
SELECT outcome, attempt IS NOT NULL AS has_attempt, generation, lease_expires_at > now() AS live, retry_after, response_status FROM idem.acquire('acme', 'k1-000000000000001', '{"a":1}'::jsonb) \gset k1_
SELECT :'k1_outcome', pg_temp.locks();
\echo == 2 same key again in the batch
SELECT outcome, handle ~ ':[0-9a-f]{32}$' AS has_secret, attempt, generation, retry_after FROM idem.acquire('acme', 'k1-000000000000001', '{"a":1}'::jsonb);
SELECT outcome, retry_after FROM idem.acquire('acme', 'k1-000000000000001', '{"a":1}'::jsonb, on_busy => 'wait');
SELECT outcome FROM idem.acquire('acme', 'k1-000000000000001', '{"a":2}'::jsonb);
SELECT pg_temp.locks();
COMMIT;
SELECT pg_temp.locks();
\echo == 3 fresh handle; complete variants (errors first, all in savepoints)
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 'k3-000000000000001', '{"a":1}'::jsonb) \gset
SELECT regexp_replace(:'h', '[0-9a-f]{32}$', '<S>') AS handle_shape;
BEGIN;
SAVEPOINT s; SELECT idem.complete(:'h', :a, NULL, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 99, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 600, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 200, '[]', NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 200, 'null', NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 200, '"x"', NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 200, NULL, NULL, repeat('é', 129)); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 200, NULL, NULL, handler_called => NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', NULL, 200, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a + 1, 200, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(regexp_replace(:'h', '[0-9a-f]{32}$', repeat('0', 32)), :a, 200, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(regexp_replace(:'h', ':[0-9a-f]{32}$', ''), :a, 200, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(regexp_replace(:'h', '[0-9a-f]{32}$', repeat('A', 32)), :a, 200, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete('garbage', :a, 200, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(NULL, :a, 200, NULL, NULL); ROLLBACK TO s;
SELECT idem.complete(:'h', :a, 200, NULL, NULL, repeat('x', 256)) IS NULL AS ok256;
SELECT pg_temp.locks(), pg_temp.rowlocked('k3-000000000000001');
SELECT idem.complete(:'h', :a, 201, NULL, NULL); 
ROLLBACK;
SELECT pg_temp.locks();
BEGIN;
SELECT idem.complete(:'h', :a, 201, '{"x":"y"}', 'body', 'ord-1', '{"p":1}', 'local', false) IS NULL AS completed;
SELECT pg_temp.locks(), pg_temp.rowlocked('k3-000000000000001');
SAVEPOINT s; SELECT idem.complete(:'h', :a, 201, NULL, NULL); ROLLBACK TO s;
COMMIT;
SELECT idem.complete(:'h', :a, 201, NULL, NULL);
SELECT pg_temp.locks();
\echo == 4 replay / mismatch / read-only
SELECT outcome, generation, response_status, response_headers, convert_from(response_body, 'UTF8') b, order_id, attempt, retry_after FROM idem.acquire('acme', 'k3-000000000000001', '{"a":1}'::jsonb);
SELECT outcome, generation, response_status, order_id, retry_after FROM idem.acquire('acme', 'k3-000000000000001', '{"a":9}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'k3-000000000000001', '{"a":1}'::jsonb, mutation_type => 'refund');
BEGIN READ ONLY;
SELECT outcome, response_status FROM idem.acquire('acme', 'k3-000000000000001', '{"a":1}'::jsonb);
SAVEPOINT s; SELECT outcome FROM idem.acquire('acme', 'k1-000000000000001', '{"a":1}'::jsonb); ROLLBACK TO s;
SELECT outcome FROM idem.acquire('acme', 'k1-000000000000001', '{"a":5}'::jsonb);
SAVEPOINT s; SELECT outcome FROM idem.acquire('acme', 'ro-000000000000001', '{"a":1}'::jsonb); ROLLBACK TO s;
SAVEPOINT s; SELECT outcome FROM idem.acquire('acme', 'rel-00000000000001', '{"a":1}'::jsonb); ROLLBACK TO s;
SELECT pg_temp.locks();
COMMIT;
\echo == 5 isolation levels
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT outcome, generation FROM idem.acquire('acme', 'rr-000000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'rr-000000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'k3-000000000000001', '{"a":1}'::jsonb);
SELECT pg_temp.locks();
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT outcome, generation FROM idem.acquire('acme', 'sr-000000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'k3-000000000000001', '{"a":9}'::jsonb);
COMMIT;
BEGIN ISOLATION LEVEL READ UNCOMMITTED;
SELECT outcome, generation FROM idem.acquire('acme', 'ru-000000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'ru-000000000000001', '{"a":1}'::jsonb, on_busy => 'wait');
COMMIT;
\echo == 6 arguments
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, lease => '0 s');
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, lease => '-1 s');
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, lease => '100 years');
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, ttl => '0 s');
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, ttl => '1000000 years');
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, on_busy => NULL);
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, on_busy => 'Wait');
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, mutation_type => NULL);
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, mutation_type => 'charge');
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, caller => NULL);
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', '{}'::jsonb, resource => NULL);
SELECT outcome FROM idem.acquire(NULL, 'arg-00000000000001', '{}'::jsonb);
SELECT outcome FROM idem.acquire('acme', NULL, '{}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', NULL::jsonb);
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', NULL::text);
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000001', NULL::bytea);
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000002', '{}'::jsonb, lease => '1 hour', ttl => '1 mon 2 days 3 s');
SELECT lease_interval, ttl, expires_at - created_at AS span, lease_expires_at - created_at AS lspan FROM idem.keys WHERE client_key = 'arg-00000000000002';
SET idem.lease_timeout = '7 s'; SET idem.default_ttl = '11 s';
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000003', '{}'::jsonb);
SELECT lease_interval, ttl FROM idem.keys WHERE client_key = 'arg-00000000000003';
SET idem.max_lease = '5 s';
SELECT outcome FROM idem.acquire('acme', 'arg-00000000000004', '{}'::jsonb);
RESET ALL;
SET synchronous_commit = off;
SELECT outcome FROM idem.acquire('acme', 'k3-000000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'sc-000000000000001', '{"a":1}'::jsonb);
RESET synchronous_commit;
SET idem.audit_replays = off;
SELECT outcome FROM idem.acquire('acme', 'k3-000000000000001', '{"a":1}'::jsonb);
RESET idem.audit_replays;
SET idem.retry_after = 17;
SELECT outcome, retry_after FROM idem.acquire('acme', 'arg-00000000000002', '{}'::jsonb);
RESET idem.retry_after;
\echo == 7 savepoints: acquire rolled back, then again
BEGIN;
SAVEPOINT s1;
SELECT outcome, generation FROM idem.acquire('acme', 'sp-000000000000001', '{"a":1}'::jsonb);
ROLLBACK TO s1;
SELECT pg_temp.locks();
SELECT outcome, generation FROM idem.acquire('acme', 'sp-000000000000001', '{"a":2}'::jsonb);
SAVEPOINT s2;
SELECT outcome FROM idem.acquire('acme', 'sp-000000000000001', '{"a":2}'::jsonb);
RELEASE s2;
SELECT pg_temp.locks();
COMMIT;
\echo == 8 pre-0.3.1 lease (no secret hash)
SELECT handle AS h8, attempt AS a8 FROM idem.acquire('acme', 'old-00000000000001', '{"a":1}'::jsonb) \gset
UPDATE idem.keys SET lease_secret_hash = NULL WHERE client_key = 'old-00000000000001';
BEGIN;
SAVEPOINT s; SELECT idem.complete(regexp_replace(:'h8', ':[0-9a-f]{32}$', ''), :a8, 200, NULL, NULL) IS NULL AS plain_ok; ROLLBACK TO s;
SELECT idem.complete(regexp_replace(:'h8', '[0-9a-f]{32}$', repeat('1', 32)), :a8, 200, NULL, NULL) IS NULL AS any_secret_ok;
COMMIT;
\echo == 9 expired lease completed by its holder (nobody took over), purge, new generation
SELECT handle AS h9, attempt AS a9 FROM idem.acquire('acme', 'exp-00000000000001', '{"a":1}'::jsonb, lease => '1 s', ttl => '1 s') \gset
SELECT pg_sleep(1.1);
SELECT idem.complete(:'h9', :a9, 200, NULL, NULL) IS NULL AS late_complete_ok;
SELECT handle AS h9b, attempt AS a9b FROM idem.acquire('acme', 'exp-00000000000002', '{"a":1}'::jsonb, lease => '1 s', ttl => '1 s') \gset
SELECT idem.complete(:'h9b', :a9b, 200, NULL, NULL) IS NULL;
SELECT pg_sleep(1.1);
SELECT outcome, generation FROM idem.acquire('acme', 'exp-00000000000001', '{"a":1}'::jsonb);
SELECT idem.purge_expired() AS purged;
SELECT outcome, generation FROM idem.acquire('acme', 'exp-00000000000002', '{"a":1}'::jsonb);
SELECT outcome, generation FROM idem.acquire('acme', 'exp-00000000000002', '{"a":1}'::jsonb);
BEGIN;
SELECT handle AS h9c, attempt AS a9c FROM idem.acquire('acme', 'exp-00000000000003', '{"a":1}'::jsonb, lease => '1 s', ttl => '1 s') \gset
SELECT idem.complete(:'h9c', :a9c, 200, NULL, NULL) IS NULL;
COMMIT;
SELECT pg_sleep(1.1);
BEGIN;
SELECT idem.purge_expired() AS purged_in_batch;
SELECT outcome, generation FROM idem.acquire('acme', 'exp-00000000000003', '{"a":1}'::jsonb);
SELECT pg_temp.locks();
COMMIT;
\echo == 10 released key: fresh attempt, resume
SELECT handle AS h10, attempt AS a10 FROM idem.acquire('acme', 'rel-00000000000001', '{"a":1}'::jsonb) \gset
SELECT idem.release(:'h10', :a10, 'boom') IS NULL;
SELECT outcome, generation FROM idem.acquire('acme', 'rel-00000000000001', '{"a":2}'::jsonb);
\echo == audit trail
SELECT client_key, outcome, generation, attempt IS NULL AS no_attempt, mutation_type, handler_called, order_id, handler_response, local_status, error_message, recovery_point, retry_count, completed_at IS NULL AS open
  FROM idem.mutations ORDER BY mutation_id;
SELECT client_key, status, generation, response_status, response_headers, order_id, handler_response, local_status, lease_expires_at IS NULL AS no_lease, (expires_at - resolved_at) AS keep, attempts_in_generation
  FROM idem.keys ORDER BY client_key;
\echo == 11 the three overloads: payload shapes and argument errors
SELECT outcome, generation FROM idem.acquire('acme', 'ov-00000000000001', 'null'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000001', 'null'::text);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000001', idem.payload_hash('null'::jsonb));
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000002', (SELECT jsonb_agg(g) FROM generate_series(1, 100000) g));
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000002', (SELECT jsonb_agg(g) FROM generate_series(1, 100000) g)::text);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000002', '{"b":2, "a":1}'::text);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000003', '{"b":2, "a":1}'::text);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000003', '{"a":1,"b":2}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000003', '{"a":1, "a":2}'::text);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000004', '{not json'::text);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000004', repeat('[', 10000)::text);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000004', '\x00'::bytea);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000004', decode(repeat('00', 33), 'hex'));
SELECT outcome FROM idem.acquire('', 'ov-00000000000004', '{}'::jsonb);
SELECT outcome FROM idem.acquire(repeat('t', 257), 'ov-00000000000004', '{}'::jsonb);
SELECT outcome FROM idem.acquire('acme', repeat('k', 300), '{}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'kéy-0000000000001', '{}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'short', '{}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000004', '{}'::jsonb, caller => repeat('c', 257));
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000004', '{}'::jsonb, resource => repeat('r', 257));
SELECT outcome FROM idem.acquire(NULL, NULL, NULL::jsonb, NULL, NULL, NULL, NULL, NULL, NULL);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000004', '{}'::jsonb, on_busy => 'bogus', lease => '0 s');
SELECT outcome FROM idem.acquire('a:b', 'ov-00000000000005', '{}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'ov-00000000000006', '{}'::jsonb, 'caller', 'resource', '5 s', '5 s', 'wait', 'void');
SELECT client_key, caller_id, resource, mutation_type, lease_interval, ttl, hash_scheme, encode(payload_hash, 'hex') FROM idem.keys WHERE client_key LIKE 'ov-%' ORDER BY 1;
SELECT client_key, outcome, mutation_type FROM idem.mutations WHERE client_key LIKE 'ov-%' ORDER BY mutation_id;
