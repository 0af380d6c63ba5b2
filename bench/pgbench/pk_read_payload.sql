-- pk_read.sql with the request's payload built as replay.sql builds it (bench_replay_payload,
-- which every replay receives and must fingerprint): the bare read of a request that carries
-- its payload. A second peer of the unaudited replay, beside pk_read.
-- pgbench -n -M prepared -D replay_keys=N -f pk_read_payload.sql
\set k random(1, :replay_keys)
BEGIN;
SELECT response_code, response_body, bench_replay_payload(:k) IS NOT NULL AS payload_received
  FROM peer_idempotency_keys
 WHERE user_id = 'acme' AND idempotency_key = bench_replay_key(:k);
COMMIT;
