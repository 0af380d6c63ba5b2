#!/usr/bin/env bash
# ignore_system_indexes (PGC_BACKEND: any role may set it in its connection's options) turns 0.3.3's
# primary-key read (systable_beginscan) into a sequential scan of idem.keys, for every acquire of
# that session; 0.3.1's read is a planned index scan and ignores the setting.
# Usage: ignore_system_indexes.sh [rows]   (default 200000 synthetic records)
B=${PGURL_BASE:-postgresql://postgres@127.0.0.1:54320}; N=${1:-200000}
psql -X -q "$B/postgres" -c "DROP ROLE IF EXISTS atk033_svc" -c "CREATE ROLE atk033_svc LOGIN IN ROLE idem_service" 2>&1 | grep -v NOTICE
for v in 0.3.1 0.3.3; do
  DB=atk033_isi_${v//./_}
  psql -X -q "$B/postgres" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" 2>&1 | grep -v NOTICE
  psql -X -q "$B/$DB" -c "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'"
  psql -X -q "$B/$DB" <<SQL
SELECT idem.complete(handle, attempt, 200, NULL, 'hello') FROM idem.acquire('acme', 'isi-00000000000001', '{"a":1}'::jsonb);
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key,
                       lease_interval, ttl, created_at, attempted_at, resolved_at, expires_at, response_status, response_headers, response_body)
  SELECT 'acme', sha256(g::text::bytea), 'resolved', nextval('idem.fencing_token_seq'), 1, sha256(('p' || g)::bytea), idem.fingerprint_scheme(), '', '',
         'isi-bulk-' || lpad(g::text, 10, '0'), '30 s', '1 day', now(), now(), now(), now() + interval '1 day', 200, '{}', 'x'
    FROM generate_series(1, $N) g;
VACUUM ANALYZE idem.keys;
SQL
  for opt in "" "-c ignore_system_indexes=on"; do
    PGOPTIONS="$opt" psql -X -q -At "postgresql://atk033_svc@127.0.0.1:54320/$DB" <<'SQL' 2>&1 | grep -v "despite IgnoreSystemIndexes\|^LINE\|^QUERY\|^ *\^\|^  *idem.payload_hash\|^  *res.outcome\|^  *coalesce"
\timing off
SELECT outcome FROM idem.acquire('acme', 'isi-00000000000001', '{"a":1}'::jsonb);
CREATE TEMP TABLE t AS SELECT clock_timestamp() AS t0;
SELECT count(*) FROM generate_series(1, 20) g, LATERAL idem.acquire('acme', 'isi-00000000000001', '{"a":1}'::jsonb) a WHERE a.outcome = 'replay';
SELECT count(*) FROM generate_series(1, 20) g, LATERAL idem.acquire('acme', 'isi-new-' || current_setting('ignore_system_indexes') || lpad(g::text, 10, '0'), '{"a":1}'::jsonb) a WHERE a.outcome = 'acquired';
SELECT format('%s  ignore_system_indexes=%s: 40 acquires in %s ms', current_database(), current_setting('ignore_system_indexes'), round(extract(epoch FROM clock_timestamp() - t0) * 1000)) FROM t;
SQL
  done
  psql -X -q -At "$B/$DB" -c "SELECT 'idem.keys: ' || pg_size_pretty(pg_relation_size('idem.keys')) || ', seq_scan=' || seq_scan || ', idx_scan=' || idx_scan FROM pg_stat_user_tables WHERE relid = 'idem.keys'::regclass"
  psql -X -q "$B/postgres" -c "DROP DATABASE $DB"
done
psql -X -q "$B/postgres" -c "DROP ROLE atk033_svc"
