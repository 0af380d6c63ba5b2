-- Shared set-up for every regression file: the extension and three helpers. pg_regress recreates
-- the database for each run, so nothing here needs IF NOT EXISTS.
-- idem.allow_non_atomic_store is deliberately NOT set: the cluster runs with fsync and
-- synchronous_commit on, and every test goes through the fail-closed durability check.
CREATE EXTENSION pg_idempotency;

-- expect_error(sql): runs sql and returns 'SQLSTATE message' of the error it raises, or
-- 'no error'. Shows the stable code and message without LOCATION/CONTEXT lines (which carry
-- file:line numbers) and keeps the session's transaction usable (the error is caught in a
-- subtransaction, so whatever sql changed is rolled back).
CREATE FUNCTION expect_error(sql text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE sql;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- expect_error(sql, tokens): expect_error(sql), with each fencing token the message quotes
-- ("attempt 42") replaced by its name in tokens ('{"a1": 42}' gives "attempt :a1"). Tokens come
-- from one global sequence, so their values depend on everything that ran before; the names say
-- which attempt the message refers to. A number not in tokens is left as it is.
CREATE FUNCTION expect_error(sql text, tokens jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_msg text := expect_error(sql);
  t record;
BEGIN
  FOR t IN SELECT key, value FROM jsonb_each_text(tokens) ORDER BY key LOOP
    v_msg := regexp_replace(v_msg, '(attempt )' || t.value || '(?![0-9])', '\1:' || t.key, 'g');
  END LOOP;
  RETURN v_msg;
END $$;

-- error_hint(sql): the HINT of the error sql raises (NULL when it has none), for the few places
-- where the hint is part of the contract ("a message that says what to do").
CREATE FUNCTION error_hint(sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_hint text;
BEGIN
  EXECUTE sql;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS v_hint = PG_EXCEPTION_HINT;
  RETURN nullif(v_hint, '');
END $$;

-- The labels of the public API (volatility, strictness, SECURITY DEFINER, parallel safety):
-- an accidental change to one of these shows up here first. Functions added later are not
-- listed on purpose (their own feature file tests them).
SELECT p.oid::regprocedure AS function, p.provolatile AS vol, p.proisstrict AS strict,
       p.prosecdef AS secdef, p.proparallel AS par
  FROM pg_proc p
 WHERE p.pronamespace = 'idem'::regnamespace
   AND p.proname IN ('canonical_json', 'payload_hash', 'fingerprint_scheme', 'validate_key',
                     'scope_digest', 'acquire', 'checkpoint', 'complete', 'release',
                     'purge_expired', '_boundary_probe')
 ORDER BY p.proname, p.oid::regprocedure::text;

-- The fencing token is a bigint from one sequence, in the record and in the acquire result.
SELECT c.oid::regclass AS relation, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.oid IN ('idem.keys'::regclass, 'idem.acquire_result'::regclass) AND a.attname = 'attempt'
 ORDER BY c.oid::regclass::text COLLATE "C";
SELECT seqrelid::regclass AS sequence, format_type(seqtypid, NULL) AS type, seqstart, seqincrement, seqcycle
  FROM pg_sequence WHERE seqrelid = 'idem.fencing_token_seq'::regclass;

-- The key store is a permanent (WAL-logged) table: the durability check depends on it.
SELECT relname, relkind, relpersistence FROM pg_class WHERE oid = 'idem.keys'::regclass;

-- The settings, their defaults, units and who may change them.
SELECT name, setting, unit, context
  FROM pg_settings
 WHERE name IN ('idem.allow_non_atomic_store', 'idem.default_ttl', 'idem.key_max_length',
                'idem.key_min_length', 'idem.lease_timeout', 'idem.retry_after')
 ORDER BY name;

-- The server the tests run on must be durable, or every key-store test fails closed.
SHOW fsync;
SHOW synchronous_commit;

-- record_of(handle): the record a handle names, without the lease secret acquire appends for a
-- holder since 0.3.1 ("<tenant>:<digest hex>:<32 hex>"): equal for every attempt at one record.
CREATE FUNCTION record_of(handle text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT regexp_replace(handle, ':[0-9a-f]{32}$', '') $$;
