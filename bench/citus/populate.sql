-- Resolves replay keys 1..:replay_keys, one transaction each (pgbench -t, one client).
SELECT nextval('bench_populated') AS k \gset
SELECT handle, attempt FROM idem.acquire('bench-t' || (:k % 8), 'replay-key-' || lpad(:k::text, 10, '0'), bench_payload('cus_r', 1999, :k)) \gset
SELECT idem.complete('bench-t' || (:k % 8), :handle, :attempt, 201, '{}', convert_to('{"replayed":' || :k || '}', 'UTF8'));
