-- replay.sql for one tenant only (-D tn=N: tenant bench-tN), for a run on the worker that holds
-- its shards (bench/citus.sh BREAKDOWN=1): the replay without the coordinator's hop.
\set k random(1, :replay_keys / 8 - 1) * 8 + :tn
SELECT outcome, response_status, response_body, 1 / (outcome = 'replay')::int AS must_be_replay
  FROM idem.acquire('bench-t' || :tn, 'replay-key-' || lpad(:k::text, 10, '0'), bench_payload('cus_r', 1999, :k));
