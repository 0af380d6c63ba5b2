-- A replay: one of the :replay_keys keys bench/citus.sh resolved, retried with its payload.
-- Any other outcome fails the transaction (division_by_zero).
\set k random(1, :replay_keys)
SELECT outcome, response_status, response_body, 1 / (outcome = 'replay')::int AS must_be_replay
  FROM idem.acquire('bench-t' || (:k % 8), 'replay-key-' || lpad(:k::text, 10, '0'), bench_payload('cus_r', 1999, :k));
