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
\c "dbname=idem_regress options=''"
SHOW ignore_system_indexes;
-- Review finding (0.3.3): the index scan gave keys_pkey's lock back when it ended, where a
-- planned read keeps it to the end of the transaction, so REINDEX INDEX idem.keys_pkey no longer
-- waited for an open transaction that had just read a record through it. It is kept now.
BEGIN;
SELECT outcome FROM idem.acquire('t-ix', 'index-read-key-0001', '{"a":1}'::jsonb);
SELECT mode, granted FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'relation' AND relation = 'idem.keys_pkey'::regclass;
COMMIT;
-- Review finding (0.3.3, low): a failed lookup of keys_pkey (here renamed by a superuser, which
-- is not supported) cached idem.keys without its index, and every later call read the heap until
-- the next invalidation of idem.keys. Both are cached or neither: once the name is back, the
-- next call reads through the index again. A new backend looks the names up on its first call.
ALTER INDEX idem.keys_pkey RENAME TO keys_pkey_renamed;
\c idem_regress
SELECT outcome FROM idem.acquire('t-ix', 'index-read-key-0001', '{"a":1}'::jsonb);
ALTER INDEX idem.keys_pkey_renamed RENAME TO keys_pkey;
BEGIN;
SELECT outcome FROM idem.acquire('t-ix', 'index-read-key-0001', '{"a":1}'::jsonb);
SELECT pg_stat_get_xact_numscans('idem.keys'::regclass) AS heap_scans_of_keys,
       pg_stat_get_xact_numscans('idem.keys_pkey'::regclass) > 0 AS read_through_keys_pkey;
COMMIT;
DELETE FROM idem.keys WHERE tenant_id = 't-ix';
