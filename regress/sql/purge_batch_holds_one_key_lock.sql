-- Bug regression (adversarial review of 0.1.1): purge_expired took a key lock for every victim and
-- kept it until commit, so a batch of about 15,000 expired records failed with "out of shared
-- memory" (the shared lock table holds max_locks_per_transaction × max_connections locks) and
-- crowded out every other session meanwhile. Fixed: each victim's key lock is given back as soon
-- as it is deleted; a batch holds one at a time.
\set SHOW_CONTEXT never
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
-- 20,000 expired resolved records, written directly (faster than 20,000 requests).
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,
                       caller_id, resource, client_key, lease_interval, ttl, response_status,
                       response_headers, response_body, created_at, resolved_at, expires_at)
SELECT 't-batch', idem.scope_digest('t-batch', '', '', format('batch-key-%010s', i)), 'resolved',
       nextval('idem.fencing_token_seq'), 1, idem.payload_hash('{}'::jsonb), 1, '', '', format('batch-key-%010s', i),
       '30 seconds', '1 second', 200, '{}', '', now() - interval '1 hour', now() - interval '1 hour',
       now() - interval '59 minutes'
  FROM generate_series(1, 20000) AS i;
BEGIN;
SELECT idem.purge_expired(100000) AS purged;
SELECT count(*) AS key_locks_held FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory';
COMMIT;
SELECT count(*) AS left_behind FROM idem.keys WHERE tenant_id = 't-batch';
SELECT count(*) AS generations_kept FROM idem.retired_keys WHERE tenant_id = 't-batch' AND generation = 1;
