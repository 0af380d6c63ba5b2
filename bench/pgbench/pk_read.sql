-- The peer of an unaudited replay (idem.audit_replays off): a bare primary-key read of the same
-- key's stored response from the hand-written table (peer_setup.sql), nothing else: no
-- fingerprint, no checks. pgbench -n -M prepared -D replay_keys=N -f pk_read.sql
\set k random(1, :replay_keys)
BEGIN;
SELECT response_code, response_body FROM peer_idempotency_keys
 WHERE user_id = 'acme' AND idempotency_key = bench_replay_key(:k);
COMMIT;
