-- (b) Replay: each transaction retries one of the :replay_keys keys that bench_populate_replay
-- resolved, with the same payload, and reads the stored response back. Any other outcome fails
-- the transaction (division_by_zero). acquire is called as the client calls it (client/src/
-- statements.cpp): a scalar, its composite taken apart above an OFFSET 0 subquery, without the
-- function scan and tuplestore of SELECT ... FROM idem.acquire(...) (replay_function_scan.sql).
-- pgbench -n -M prepared -D replay_keys=N -f replay.sql
\set k random(1, :replay_keys)
BEGIN;
SELECT (a).outcome, (a).response_status, (a).response_headers, (a).response_body, (a).order_id,
       1 / ((a).outcome = 'replay')::int AS must_be_replay
  FROM (SELECT idem.acquire('acme', bench_replay_key(:k), bench_replay_payload(:k)) AS a OFFSET 0) s;
COMMIT;
