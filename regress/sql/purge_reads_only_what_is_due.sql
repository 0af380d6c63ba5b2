-- Bug regression (issue 11, 0.3.3): purge_expired's scans compared with clock_timestamp(), which
-- an index cannot use as a bound, so whenever fewer than a batch were due (a purge that keeps up)
-- a call read every entry of the purge index, i.e. the whole store, and every generation in
-- idem.retired_keys: its cost grew with the store. Now the scans are bounded by the call's start
-- time. Counted, not timed: the index entries the call's scans returned.
\set SHOW_CONTEXT never
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
-- 1,000 records not due for a day, 1,000 generations remembered since a moment ago, 3 records due.
-- n resolved records of keys '<prefix>-key-0000000001'..., resolved `age` ago and history
-- (expires_at passed) or not for `ttl` after that, written directly (faster than n requests).
CREATE FUNCTION pg_temp.resolved_records(prefix text, n integer, ttl interval, age interval) RETURNS void
  LANGUAGE sql AS $$
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,
                       caller_id, resource, client_key, lease_interval, ttl, response_status,
                       response_headers, response_body, created_at, resolved_at, expires_at)
SELECT 't-due', idem.scope_digest('t-due', '', '', format('%s-key-%010s', prefix, i)), 'resolved',
       nextval('idem.fencing_token_seq'), 1, idem.payload_hash('{}'::jsonb), 1, '', '', format('%s-key-%010s', prefix, i),
       '30 seconds', ttl, 200, '{}', '', now() - age, now() - age, now() - age + ttl
  FROM generate_series(1, n) AS i $$;
SELECT pg_temp.resolved_records('live', 1000, '1 day', '0 seconds');
INSERT INTO idem.retired_keys (tenant_id, scope_digest, generation, retired_at)
SELECT 't-due', idem.scope_digest('t-due', '', '', format('gone-key-%010s', i)), 1, now()
  FROM generate_series(1, 1000) AS i;
SELECT pg_temp.resolved_records('due', 3, '1 second', '1 hour');
VACUUM ANALYZE idem.keys;
VACUUM ANALYZE idem.retired_keys;

SELECT pg_stat_force_next_flush();  -- flushed when this session next waits for a statement
CREATE TEMP TABLE reads_before AS
  SELECT indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes
   WHERE indexrelname IN ('keys_purge_after_idx', 'retired_keys_retired_at_idx', 'keys_pkey');
SELECT idem.purge_expired(500) AS purged;
SELECT idem.purge_expired(500) AS purged_when_none_due;
SELECT pg_stat_force_next_flush();
-- 0.3.2 read every entry: 2,000 or more from each index. One scan of each per call (a first
-- 0.3.3 scanned the purge index again when a call fell short of its batch). No probe of the
-- primary key: the DELETE fetches each locked record where the scan read it (0.3.3 probed
-- keys_pkey once per record: 3 scans here).
SELECT s.indexrelname, s.idx_tup_read - b.idx_tup_read < 20 AS reads_only_what_is_due, s.idx_scan - b.idx_scan AS scans
  FROM pg_stat_user_indexes s JOIN reads_before b USING (indexrelname) ORDER BY 1;

-- At most 500 key locks per call, the pass that forgets old generations included (0.3.2 kept up
-- to 500 more there): 600 history records and 600 generations past the history retention.
SELECT pg_temp.resolved_records('old', 600, '1 second', '1 hour');
UPDATE idem.retired_keys SET retired_at = now() - idem._history_retention() - interval '1 day' WHERE tenant_id = 't-due';
INSERT INTO idem.retired_keys (tenant_id, scope_digest, generation, retired_at)
SELECT 't-due', idem.scope_digest('t-due', '', '', format('forgotten-key-%010s', i)), 1,
       now() - idem._history_retention() - interval '1 day'
  FROM generate_series(1, 600) AS i;
BEGIN;
SELECT idem.purge_expired(100000) AS purged;
SELECT count(*) AS key_locks_held FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 3;
COMMIT;
BEGIN;
SELECT idem.purge_expired(100000) AS purged_next;
SELECT count(*) AS key_locks_held_next FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 3;
COMMIT;
SELECT count(*) AS records_left FROM idem.keys WHERE tenant_id = 't-due' AND client_key LIKE 'old-key-%';
-- With no record left to purge, a call still forgets up to 500 old generations.
CREATE TEMP TABLE old_before AS
  SELECT count(*) AS n FROM idem.retired_keys WHERE tenant_id = 't-due' AND retired_at < now() - idem._history_retention();
SELECT idem.purge_expired(100000) AS purged_none;
SELECT b.n - count(*) AS generations_forgotten FROM idem.retired_keys r, old_before b
 WHERE r.tenant_id = 't-due' AND r.retired_at < now() - idem._history_retention() GROUP BY b.n;
DELETE FROM idem.keys WHERE tenant_id = 't-due';
DELETE FROM idem.retired_keys WHERE tenant_id = 't-due';
