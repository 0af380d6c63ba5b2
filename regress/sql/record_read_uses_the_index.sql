-- Review finding (0.3.3): acquire's record read went through systable_beginscan, which reads the
-- heap instead of the index when a session sets ignore_system_indexes (any role may, at
-- connection start): a full scan of idem.keys per call. It is an index scan of keys_pkey now.
\set SHOW_CONTEXT never
SELECT idem.complete(a.handle, a.attempt, 201, '{}', '\x6f6b', 'ord-ix-1')
  FROM idem.acquire('t-ix', 'index-read-key-0001', '{"a":1}'::jsonb) a;
\c "dbname=idem_regress options='-c ignore_system_indexes=on'"
SHOW ignore_system_indexes;
BEGIN;
SELECT outcome, convert_from(response_body, 'UTF8') AS body FROM idem.acquire('t-ix', 'index-read-key-0001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('t-ix', 'index-read-key-0001', '{"a":2}'::jsonb);
SELECT pg_stat_get_xact_numscans('idem.keys'::regclass) AS heap_scans_of_keys,
       pg_stat_get_xact_numscans('idem.keys_pkey'::regclass) > 0 AS read_through_keys_pkey;
COMMIT;
\c idem_regress
DELETE FROM idem.keys WHERE tenant_id = 't-ix';
