-- CEILING of an audited replay: the one write every audited replay makes (a row naming the key,
-- into a table without indexes) and its commit, and nothing else: no lookup, no fingerprint, no
-- answer. replay / peer_replay are measured against it ("1.5x the peer" lies above it, README).
-- pgbench -n -M prepared -D replay_keys=N -f ceiling_replay.sql
\set k random(1, :replay_keys)
BEGIN;
INSERT INTO bench_replay_ceiling (client_key) VALUES (bench_replay_key(:k));
COMMIT;
