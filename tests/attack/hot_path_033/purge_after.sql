-- purge_after: 0.3.2's generated column against 0.3.3's trigger (diff_sql.sh purge_after.sql 0.3.2 0.3.3),
-- and in each database the stored value against the 0.3.2 expression itself.
\set VERBOSITY default
\set SHOW_CONTEXT never
\pset null <null>
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.expr(k idem.keys) RETURNS timestamptz LANGUAGE sql AS
  $$SELECT CASE WHEN k.expires_at IS NOT NULL THEN to_timestamp(extract(epoch FROM (coalesce(k.attempted_at, k.created_at) - 'epoch'::timestamptz) + k.ttl)) END$$;
CREATE FUNCTION pg_temp.bad() RETURNS text LANGUAGE sql AS
  $$SELECT 'rows ' || count(*) || ', differing from the expression: ' || count(*) FILTER (WHERE k.purge_after IS DISTINCT FROM pg_temp.expr(k)) FROM idem.keys k$$;
CREATE FUNCTION pg_temp.row(key text) RETURNS text LANGUAGE sql AS
  $$SELECT coalesce((SELECT format('%s pa=%s expr=%s %s', k.client_key, k.purge_after, pg_temp.expr(k), CASE WHEN k.purge_after IS NOT DISTINCT FROM pg_temp.expr(k) THEN 'same' ELSE 'DIFFERENT' END) FROM idem.keys k WHERE k.client_key = key), key || ' absent')$$;
-- A record by hand: status released without checkpoint unless told (expires_at NULL needs a checkpoint)
CREATE FUNCTION pg_temp.ins(key text, p_attempted timestamptz, p_created timestamptz, p_ttl interval, p_expires timestamptz)
  RETURNS text LANGUAGE sql AS $$
  INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key,
                         lease_interval, ttl, created_at, attempted_at, expires_at, recovery_point)
  VALUES ('acme', sha256(key::bytea), 'released', 1, 1, sha256(key::bytea), 1, '', '', key, '30 s', p_ttl,
          p_created, p_attempted, p_expires, CASE WHEN p_expires IS NULL THEN 'cp' END)
  RETURNING pg_temp.row(key)$$;
SET TimeZone = 'America/St_Johns';

\echo == P1 odd intervals and instants
SELECT pg_temp.ins('p1-month', '2027-01-31 10:00+00', '2027-01-31 09:00+00', '1 mon', '2027-02-28 10:00+00');
SELECT pg_temp.ins('p1-mix', '2026-03-08 01:59:59.999999-05', '2026-01-01', '1 year 2 mons 3 days 04:05:06.789012', now());
SELECT pg_temp.ins('p1-neg', '2026-01-01', '2026-01-01', '-3 days +2 hours -1 microsecond', now());
SELECT pg_temp.ins('p1-negmon', '2026-01-01', '2026-01-01', '-1 mon', now());
SELECT pg_temp.ins('p1-usec', '2026-01-01 00:00:00.000001+00', '2026-01-01', '1 microsecond', now());
SELECT pg_temp.ins('p1-zero', '2026-01-01', '2026-01-01', '0', now());
SELECT pg_temp.ins('p1-nullatt', NULL, '2026-06-15 12:34:56.789+02', '90 days', now());
SELECT pg_temp.ins('p1-nullexp', '2026-01-01', '2026-01-01', '1 day', NULL);
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at, purge_after)
  VALUES ('acme', sha256('p1-explicit'::bytea), 'released', 1, 1, sha256('x'::bytea), 1, '', '', 'p1-explicit', '30 s', '1 day', '2026-01-01', '2026-01-01', now(), '1999-01-01');
SELECT pg_temp.row('p1-explicit');
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at, purge_after)
  VALUES ('acme', sha256('p1-explicit-null'::bytea), 'released', 1, 1, sha256('x'::bytea), 1, '', '', 'p1-explicit-null', '30 s', '1 day', '2026-01-01', '2026-01-01', now(), NULL);
SELECT pg_temp.row('p1-explicit-null');
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at, purge_after)
  VALUES ('acme', sha256('p1-explicit-def'::bytea), 'released', 1, 1, sha256('x'::bytea), 1, '', '', 'p1-explicit-def', '30 s', '1 day', '2026-01-01', '2026-01-01', now(), DEFAULT);
SELECT pg_temp.row('p1-explicit-def');
SELECT pg_temp.ins('p1-1970', '1970-01-01 00:00:00+00', '1970-01-01', '0', now());
SELECT pg_temp.ins('p1-prehist', '4713-11-24 00:00:00+00 BC', '4713-11-24 00:00:00+00 BC', '1 day', now());
SELECT pg_temp.ins('p1-far', '294276-12-30 00:00:00+00', '2026-01-01', '1 day', now());
SELECT pg_temp.ins('p1-far2', '200000-12-30 00:00:00+00', '2026-01-01', '1000 years', now());
SELECT pg_temp.ins('p1-hugettl', '2026-01-01', '2026-01-01', '178000000 years', now());
SELECT pg_temp.ins('p1-hugettl2', '2026-01-01', '2026-01-01', '2147483647 days 2562047788:00:54.775807', now());
SELECT pg_temp.ins('p1-inf', 'infinity', '2026-01-01', '1 day', now());
SELECT pg_temp.ins('p1-ninf', NULL, '-infinity', '1 day', now());
SELECT pg_temp.ins('p1-float', '2026-05-05 05:05:05.555555+00', '2026-01-01', '00:00:00.444445', now());
-- rows that also break an invariant (which error wins?)
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at)
  VALUES ('acme', sha256('p1-both'::bytea), 'bogus', 1, 1, sha256('x'::bytea), 1, '', '', 'p1-both', '30 s', '178000000 years', now(), now(), now());
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at)
  VALUES ('acme', sha256('p1-both2'::bytea), 'released', 1, 1, sha256('x'::bytea), 1, NULL, '', 'p1-both2', '30 s', '178000000 years', now(), now(), now());
-- random rows
SELECT setseed(0.33);
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key,
                       lease_interval, ttl, created_at, attempted_at, expires_at, recovery_point)
  SELECT 'rnd', sha256(g::text::bytea), 'released', 1, 1, sha256(g::text::bytea), 1, '', '', 'rnd-' || g, '30 s',
         make_interval(months => (random() * 40 - 10)::int, days => (random() * 400 - 50)::int) + (random() * 1e11 - 1e10)::bigint * interval '1 microsecond',
         c, CASE WHEN random() < 0.2 THEN NULL ELSE c + (random() * 1e12)::bigint * interval '1 microsecond' END,
         CASE WHEN e THEN NULL ELSE now() END, CASE WHEN e THEN 'cp' END
    FROM (SELECT g, timestamptz '2000-01-01' + (random() * 1e15)::bigint * interval '1 microsecond' AS c, random() < 0.1 AS e FROM generate_series(1, 20000) g) s;
SELECT pg_temp.bad();
SELECT left(md5(string_agg(client_key || '=' || coalesce(purge_after::text, '-'), ',' ORDER BY client_key)), 30) AS rnd_values, count(*) FROM idem.keys WHERE tenant_id = 'rnd';

\echo == P2 UPDATEs
UPDATE idem.keys SET ttl = ttl + interval '1 mon 1 microsecond' WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-1%';
UPDATE idem.keys SET attempted_at = NULL WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-2%';
UPDATE idem.keys SET created_at = created_at - interval '1 day' WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-3%';
UPDATE idem.keys SET last_error = 'x' WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-4%';
UPDATE idem.keys SET expires_at = NULL, recovery_point = 'cp' WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-5%' AND expires_at IS NOT NULL;
UPDATE idem.keys SET expires_at = now(), recovery_point = NULL WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-6%' AND expires_at IS NULL;
UPDATE idem.keys SET ttl = interval '24 hours' WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-7%';
UPDATE idem.keys SET ttl = interval '1 day' WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-7%';
SELECT pg_temp.bad();
UPDATE idem.keys SET purge_after = '2001-01-01' WHERE client_key = 'p1-mix';
UPDATE idem.keys SET purge_after = DEFAULT WHERE client_key = 'p1-mix';
UPDATE idem.keys SET purge_after = purge_after WHERE client_key = 'p1-mix';
UPDATE idem.keys SET purge_after = NULL, last_error = 'y' WHERE client_key = 'p1-mix';
SELECT pg_temp.row('p1-mix');
UPDATE idem.keys SET ttl = '-178000000 years' WHERE client_key = 'p1-mix';
UPDATE idem.keys SET attempted_at = 'infinity' WHERE client_key = 'p1-mix';
SELECT pg_temp.row('p1-mix');

\echo == P3 INSERT ... SELECT * FROM idem.keys, ON CONFLICT, COPY, replica role
CREATE TABLE public.saved AS SELECT * FROM idem.keys WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-8%';
UPDATE public.saved SET purge_after = '1990-01-01';
DELETE FROM idem.keys WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-8%';
INSERT INTO idem.keys SELECT * FROM public.saved;
INSERT INTO idem.keys SELECT (s).* FROM (SELECT s FROM public.saved s) x;
SELECT 'restored ' || count(*) FROM idem.keys WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-8%';
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at)
  SELECT tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at FROM public.saved;
SELECT 'restored by column list ' || count(*) FROM idem.keys WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-8%';
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at)
  SELECT tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl * 2, created_at, attempted_at, expires_at FROM public.saved
  ON CONFLICT (tenant_id, scope_digest) DO UPDATE SET ttl = excluded.ttl, attempted_at = excluded.attempted_at + interval '1 second';
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at)
  SELECT tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl * 3, created_at, attempted_at, expires_at FROM public.saved
  ON CONFLICT (tenant_id, scope_digest) DO UPDATE SET last_error = 'conflict';
SELECT pg_temp.bad();
COPY (SELECT * FROM idem.keys WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-9%') TO '/tmp/atk033_keys.copy';
DELETE FROM idem.keys WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-9%';
COPY idem.keys FROM '/tmp/atk033_keys.copy';
COPY idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, attempted_at, expires_at) FROM stdin;
acme	\\x0101010101010101010101010101010101010101010101010101010101010101	released	1	1	\\x0101010101010101010101010101010101010101010101010101010101010101	1			p3-copy	30 s	7 days 3 mons	2026-01-01	2026-02-01	2026-03-01
\.
SELECT pg_temp.row('p3-copy');
SET session_replication_role = replica;
UPDATE idem.keys SET ttl = ttl * 2 WHERE tenant_id = 'rnd' AND client_key LIKE 'rnd-11%';
SELECT pg_temp.ins('p3-replica', '2026-01-01', '2026-01-01', '5 days', now());
RESET session_replication_role;
SELECT pg_temp.bad();
SELECT left(md5(string_agg(client_key || '=' || coalesce(purge_after::text, '-'), ',' ORDER BY client_key)), 30) AS rnd_values, count(*) FROM idem.keys WHERE tenant_id = 'rnd';

\echo == P4 the C paths: acquire, complete, release, checkpoint, resume, takeover
SET idem.lease_timeout = '1 s';
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 'p4-0000000000000001', '{"a":1}'::jsonb, ttl => '7 days 0.5 s') \gset
SELECT pg_temp.row('p4-0000000000000001');
SELECT idem.complete(:'h', :a, 200, NULL, 'x') IS NULL; SELECT pg_temp.row('p4-0000000000000001');
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 'p4-0000000000000002', '{"a":1}'::jsonb) \gset
SELECT idem.checkpoint(:'h', :a, 'cp1') IS NOT NULL; SELECT pg_temp.row('p4-0000000000000002');
SELECT idem.release(:'h', :a, 'boom') IS NULL; SELECT pg_temp.row('p4-0000000000000002');
SELECT outcome FROM idem.acquire('acme', 'p4-0000000000000002', '{"a":1}'::jsonb, ttl => '3 days'); SELECT pg_temp.row('p4-0000000000000002');
SELECT pg_sleep(1.1);
SELECT outcome FROM idem.acquire('acme', 'p4-0000000000000002', '{"a":1}'::jsonb, ttl => '5 days'); SELECT pg_temp.row('p4-0000000000000002');
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 'p4-0000000000000003', '{"a":1}'::jsonb) \gset
SELECT idem.release(:'h', :a, 'boom') IS NULL; SELECT pg_temp.row('p4-0000000000000003');
SELECT outcome FROM idem.acquire('acme', 'p4-0000000000000003', '{"a":2}'::jsonb, ttl => '2 days'); SELECT pg_temp.row('p4-0000000000000003');
SELECT pg_temp.bad();
\! rm -f /tmp/atk033_keys.copy
