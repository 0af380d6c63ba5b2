-- purge_after left stale: by a later BEFORE trigger of an operator, and by a write with the
-- trigger disabled, then later UPDATEs (0.3.3's shortcut keeps the old value when attempted_at,
-- created_at, ttl, purge_after and the nullness of expires_at are unchanged).  Run on 0.3.2 and 0.3.3.
\set VERBOSITY default
\set SHOW_CONTEXT never
\pset null <null>
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.expr(k idem.keys) RETURNS timestamptz LANGUAGE sql AS
  $$SELECT CASE WHEN k.expires_at IS NOT NULL THEN to_timestamp(extract(epoch FROM (coalesce(k.attempted_at, k.created_at) - 'epoch'::timestamptz) + k.ttl)) END$$;
CREATE FUNCTION pg_temp.row(key text) RETURNS text LANGUAGE sql AS
  $$SELECT coalesce((SELECT format('%s ttl=%s pa-attempted=%s expires-attempted=%s %s', k.client_key, k.ttl, k.purge_after - k.attempted_at, k.expires_at - k.attempted_at, CASE WHEN k.purge_after IS NOT DISTINCT FROM pg_temp.expr(k) THEN 'same' ELSE 'DIFFERENT' END) FROM idem.keys k WHERE k.client_key = key), key || ' absent')$$;

\echo == S1 an operator BEFORE trigger that fires after keys_invariants (name order) and sets ttl
CREATE FUNCTION public.long_ttl() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN
  IF NEW.tenant_id = 'vip' THEN NEW.ttl := interval '30 days'; END IF; RETURN NEW; END $$;
CREATE TRIGGER zz_long_ttl BEFORE INSERT OR UPDATE ON idem.keys FOR EACH ROW EXECUTE FUNCTION public.long_ttl();
SELECT handle AS h, attempt AS a FROM idem.acquire('vip', 's1-0000000000000001', '{"a":1}'::jsonb, ttl => '1 s') \gset
SELECT pg_temp.row('s1-0000000000000001');
SELECT idem.complete(:'h', :a, 200, NULL, 'x') IS NULL;
SELECT pg_temp.row('s1-0000000000000001');
DROP TRIGGER zz_long_ttl ON idem.keys;

\echo == S2 written with the trigger disabled, then ordinary updates and the API
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 's2-0000000000000001', '{"a":1}'::jsonb, ttl => '1 s') \gset
ALTER TABLE idem.keys DISABLE TRIGGER keys_invariants;
UPDATE idem.keys SET ttl = interval '1 s' * 0.5 WHERE client_key = 's2-0000000000000001';
UPDATE idem.keys SET purge_after = purge_after + interval '10 years' WHERE client_key = 's2-0000000000000001';
ALTER TABLE idem.keys ENABLE ALWAYS TRIGGER keys_invariants;
SELECT pg_temp.row('s2-0000000000000001');
UPDATE idem.keys SET last_error = 'touched' WHERE client_key = 's2-0000000000000001';
SELECT pg_temp.row('s2-0000000000000001');
SELECT idem.complete(:'h', :a, 200, NULL, 'x') IS NULL;
SELECT pg_temp.row('s2-0000000000000001');
SELECT pg_sleep(1.2);
SELECT idem.purge_expired() AS purged, pg_temp.row('s2-0000000000000001');
SELECT outcome, generation FROM idem.acquire('acme', 's2-0000000000000001', '{"a":2}'::jsonb);

\echo == S3 a superuser session with session_replication_role = replica + DISABLE TRIGGER ALL
SELECT handle AS h, attempt AS a FROM idem.acquire('acme', 's3-0000000000000001', '{"a":1}'::jsonb, ttl => '1 s') \gset
SET session_replication_role = replica;
UPDATE idem.keys SET ttl = '2 s' WHERE client_key = 's3-0000000000000001';
RESET session_replication_role;
SELECT pg_temp.row('s3-0000000000000001');
