-- Bug regression (adversarial reviews of 0.1.1): purge_expired took a key lock for every victim
-- and kept it until commit, so a batch of about 15,000 expired records failed with "out of shared
-- memory" (the shared lock table holds max_locks_per_transaction × max_connections locks) and
-- crowded out every other session. Giving each lock back at once instead let an acquirer insert
-- behind the uncommitted delete and wait for it (and a REPEATABLE READ acquirer restart the
-- generation), and two purges wait for and deadlock on each other. Fixed: a deleted record's key
-- stays locked until the purge commits (acquirers see a busy key), a key the purge passes over is
-- given back at once, and a call deletes at most 500 records: call it until it returns 0.
\set SHOW_CONTEXT never
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
-- 2,000 expired resolved records, written directly (faster than 2,000 requests).
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,
                       caller_id, resource, client_key, lease_interval, ttl, response_status,
                       response_headers, response_body, created_at, resolved_at, expires_at)
SELECT 't-batch', idem.scope_digest('t-batch', '', '', format('batch-key-%010s', i)), 'resolved',
       nextval('idem.fencing_token_seq'), 1, idem.payload_hash('{}'::jsonb), 1, '', '', format('batch-key-%010s', i),
       '30 seconds', '1 second', 200, '{}', '', now() - interval '1 hour', now() - interval '1 hour',
       now() - interval '59 minutes'
  FROM generate_series(1, 2000) AS i;
BEGIN;
SELECT idem.purge_expired(100000) AS purged;
SELECT count(*) AS key_locks_held FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 3;
COMMIT;
SELECT count(*) AS key_locks_after_commit FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory';
SELECT idem.purge_expired(100000) AS second, idem.purge_expired(100000) AS third, idem.purge_expired(100000) AS fourth,
       idem.purge_expired(100000) AS fifth;
SELECT count(*) AS left_behind FROM idem.keys WHERE tenant_id = 't-batch';
SELECT count(*) AS generations_kept FROM idem.retired_keys WHERE tenant_id = 't-batch' AND generation = 1;

-- A purge in the holder's own transaction leaves the holder's unfinished key alone (its lock is
-- re-entrant for this transaction, so "free to purge" must mean "not held by us either").
BEGIN;
SELECT outcome, generation FROM idem.acquire('t-batch', 'own-key-in-purge1', '{}'::jsonb, lease => '50 milliseconds', ttl => '50 milliseconds');
SELECT pg_sleep(0.2);
SELECT idem.purge_expired() AS purged_own;
SELECT outcome, generation FROM idem.acquire('t-batch', 'own-key-in-purge1', '{}'::jsonb);
COMMIT;

-- The key's lock and SQL's advisory lock on the same 64 bits are different locks (objsubid 3 and 1):
-- an outsider cannot pin a key with pg_advisory_lock (two sessions: isolation spec
-- outsider_cannot_pin_a_key).
BEGIN;
SELECT handle AS h FROM idem.acquire('t-batch', 'pinned-key-000001', '{}'::jsonb) \gset
SELECT pg_advisory_xact_lock(idem._lock_key(idem._handle_digest(:'h')));
SELECT objsubid, count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'
   AND ((classid::bigint << 32) | objid::bigint) = (idem._lock_key(idem._handle_digest(:'h')) & x'FFFFFFFFFFFFFFFF'::bigint)
 GROUP BY objsubid ORDER BY objsubid;
ROLLBACK;

-- Bug regression (the model-based test): purge took the batch's oldest history records first and
-- only then passed over those in use, so a held old record made purge_expired(1) return 0 while
-- free history waited behind it, and "call until 0" stopped early. Keys in use are now passed
-- over without counting against the batch.
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
SELECT handle AS held FROM idem.acquire('t-batch', 'held-history-key1', '{}'::jsonb, lease => '10 milliseconds', ttl => '10 milliseconds') \gset
SELECT pg_sleep(0.05);
SELECT handle AS free FROM idem.acquire('t-batch', 'free-history-key1', '{}'::jsonb, lease => '10 milliseconds', ttl => '10 milliseconds') \gset
SELECT pg_sleep(0.1);
BEGIN;
SELECT idem._try_lock_key(idem._lock_key(idem._handle_digest(:'held'))) AS holding_the_oldest;
SELECT idem.purge_expired(1) AS purged_behind_it;
SELECT client_key FROM idem.keys WHERE tenant_id = 't-batch' AND client_key LIKE '%history-key1' ORDER BY 1;
COMMIT;
SELECT idem.purge_expired(1) AS purged_once_free;

-- Review of 0.3.3: the pass that forgets retired generations past idem.history_retention took a
-- key lock for each too, beside those of the records it deleted (1,000 locks in one call for 500
-- of each). It counts toward the 500, and gives back the lock of a key it forgot nothing under.
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,
                       caller_id, resource, client_key, lease_interval, ttl, response_status,
                       response_headers, response_body, created_at, resolved_at, expires_at)
SELECT 't-forget', idem.scope_digest('t-forget', '', '', 'history-key-' || lpad(i::text, 6, '0')), 'resolved',
       nextval('idem.fencing_token_seq'), 1, idem.payload_hash('{}'::jsonb), 1, '', '', 'history-key-' || lpad(i::text, 6, '0'),
       '30 seconds', '1 second', 200, '{}', '', now() - interval '1 hour', now() - interval '1 hour',
       now() - interval '59 minutes'
  FROM generate_series(1, 600) AS i;
INSERT INTO idem.retired_keys (tenant_id, scope_digest, generation, retired_at)
SELECT 't-forget', idem.scope_digest('t-forget', '', '', 'forgotten-key-' || lpad(i::text, 6, '0')), 5,
       now() - idem._history_retention() - interval '1 day'
  FROM generate_series(1, 600) AS i;
CREATE TEMP VIEW forget_state AS
  SELECT (SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 3) AS key_locks_held,
         count(*) FILTER (WHERE generation = 1) AS retired_so_far, count(*) FILTER (WHERE generation = 5) AS not_yet_forgotten
    FROM idem.retired_keys WHERE tenant_id = 't-forget';
BEGIN;
SELECT idem.purge_expired(100000) AS purged;
SELECT * FROM forget_state;
COMMIT;
-- The next call deletes the last 100 records and forgets with what is left of its 500.
BEGIN;
SELECT idem.purge_expired(100000) AS purged;
SELECT * FROM forget_state;
COMMIT;
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
SELECT count(*) AS records_left, (SELECT count(*) FROM idem.retired_keys WHERE tenant_id = 't-forget' AND generation = 5) AS forgettable_left
  FROM idem.keys WHERE tenant_id = 't-forget';
DROP VIEW forget_state;
DELETE FROM idem.retired_keys WHERE tenant_id = 't-forget';
