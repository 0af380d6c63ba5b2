-- (b) Replay: each transaction retries one of the :replay_keys keys that bench_populate_replay
-- resolved, with the same payload, and reads the stored response back. Any other outcome fails
-- the transaction (division_by_zero).
-- pgbench -n -M prepared -D replay_keys=N -f replay.sql
\set k random(1, :replay_keys)
BEGIN;
SELECT outcome, response_status, response_headers, response_body, order_id,
       1 / (outcome = 'replay')::int AS must_be_replay
  FROM idem.acquire('acme', bench_replay_key(:k), bench_replay_payload(:k));
COMMIT;
