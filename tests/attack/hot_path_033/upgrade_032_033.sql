-- Records made on 0.3.2 (generated purge_after), the extension updated to 0.3.3 in the same warm
-- session, then completed/released/taken over on 0.3.3: purge_after equals the expression, complete
-- stays HOT, the purge finds what is due.  Run: diff_sql.sh upgrade_032_033.sql 0.3.2
\pset null <null>
SET client_min_messages = warning;
CREATE TABLE public.h AS SELECT i, a.handle, a.attempt FROM generate_series(1, 200) i, LATERAL idem.acquire('acme', format('up-%s-0000000000000', i), '{}'::jsonb, lease => '1 s', ttl => '1 s') a;
SELECT count(*) FROM (SELECT idem.complete(handle, attempt, 200, NULL, 'before') FROM public.h WHERE i <= 50) x;
SELECT outcome FROM idem.acquire('acme', 'up-1-0000000000000', '{}'::jsonb);
ALTER EXTENSION pg_idempotency UPDATE;
SELECT extversion, (SELECT attgenerated FROM pg_attribute WHERE attrelid = 'idem.keys'::regclass AND attname = 'purge_after') AS generated FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT outcome, convert_from(response_body, 'UTF8') FROM idem.acquire('acme', 'up-1-0000000000000', '{}'::jsonb);
SELECT pg_stat_force_next_flush();
SELECT count(*) FROM (SELECT idem.complete(handle, attempt, 201, NULL, 'after') FROM public.h WHERE i BETWEEN 51 AND 150) x;
SELECT count(*) FROM (SELECT idem.release(handle, attempt, 'x') FROM public.h WHERE i > 150) x;
SELECT pg_sleep(1.1);
SELECT count(*) FILTER (WHERE outcome = 'acquired') AS retaken FROM public.h, LATERAL idem.acquire('acme', format('up-%s-0000000000000', i), '{}'::jsonb, ttl => '1 s') a WHERE i > 190;
SELECT 'rows ' || count(*) || ', differing from the expression: ' || count(*) FILTER (WHERE k.purge_after IS DISTINCT FROM CASE WHEN k.expires_at IS NOT NULL THEN to_timestamp(extract(epoch FROM (coalesce(k.attempted_at, k.created_at) - 'epoch'::timestamptz) + k.ttl)) END) FROM idem.keys k;
SELECT pg_stat_force_next_flush();
SELECT pg_sleep(0.7);
SELECT pg_sleep(1.1);
SELECT idem.purge_expired(500) AS purged;
SELECT count(*) AS left_after_purge, count(*) FILTER (WHERE expires_at < now()) AS due_left FROM idem.keys;
