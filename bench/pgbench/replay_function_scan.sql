-- replay.sql as the client called acquire before 0.4.0 (SELECT ... FROM idem.acquire(...), a
-- function scan materializing its row in a tuplestore), for the comparison in docs/hot-path.md.
-- pgbench -n -M prepared -D replay_keys=N -f replay_function_scan.sql
\set k random(1, :replay_keys)
BEGIN;
SELECT outcome, response_status, response_headers, response_body, order_id,
       1 / (outcome = 'replay')::int AS must_be_replay
  FROM idem.acquire('acme', bench_replay_key(:k), bench_replay_payload(:k));
COMMIT;
