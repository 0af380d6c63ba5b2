-- The peer of replay.sql (peer_setup.sql): an audited replay of one of :replay_keys resolved keys.
-- pgbench -n -M prepared -D replay_keys=N -f peer_replay.sql
\set k random(1, :replay_keys)
BEGIN;
SELECT outcome, response_code, response_body, 1 / (outcome = 'replay')::int AS must_be_replay
  FROM peer_acquire('acme', bench_replay_key(:k), bench_replay_payload(:k));
COMMIT;
