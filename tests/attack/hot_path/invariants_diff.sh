#!/usr/bin/env bash
# Differential test of the invariants: idem.keys/idem.mutations writes that break each old CHECK
# (and NULL / multi-violation cases), run against 0.3.1 (the CHECK constraints) and 0.3.2 (the C
# trigger). Prints, per case: SQLSTATE, constraint name field, message, detail; then the diff.
set -u
B=postgresql://postgres@127.0.0.1:54320
W=$(mktemp -d)
cases() { cat <<'SQL'
CREATE TEMP TABLE t_cases(n serial, sql text);
INSERT INTO t_cases(sql) VALUES
 ($$UPDATE idem.keys SET attempt = 0$$),
 ($$UPDATE idem.keys SET attempt = -5$$),
 ($$UPDATE idem.keys SET lease_expires_at = NULL$$),
 ($$UPDATE idem.keys SET status = 'resolved', lease_expires_at = NULL$$),
 ($$UPDATE idem.keys SET status = 'resolved', lease_expires_at = NULL, response_status = 200, expires_at = NULL$$),
 ($$UPDATE idem.keys SET generation = 0$$),
 ($$UPDATE idem.keys SET expires_at = NULL$$),
 ($$UPDATE idem.keys SET recovery_point = 'rp'$$),
 ($$UPDATE idem.keys SET recovery_point = 'rp', expires_at = NULL$$),
 ($$UPDATE idem.keys SET mutation_type = 'Create'$$),
 ($$UPDATE idem.keys SET mutation_type = 'create '$$),
 ($$UPDATE idem.keys SET payload_hash = '\x00'$$),
 ($$UPDATE idem.keys SET payload_hash = decode(repeat('00', 33), 'hex')$$),
 ($$UPDATE idem.keys SET response_status = 99$$),
 ($$UPDATE idem.keys SET response_status = 600$$),
 ($$UPDATE idem.keys SET response_status = -1$$),
 ($$UPDATE idem.keys SET scope_digest = '\x01'$$),
 ($$UPDATE idem.keys SET status = 'bogus', lease_expires_at = NULL$$),
 ($$UPDATE idem.keys SET status = 'bogus'$$),
 ($$UPDATE idem.keys SET status = 'released', lease_expires_at = NULL$$),
 ($$UPDATE idem.keys SET tenant_id = ''$$),
 ($$UPDATE idem.keys SET attempt = NULL, generation = 0$$),
 ($$UPDATE idem.keys SET status = NULL, generation = 0$$),
 ($$UPDATE idem.keys SET status = NULL$$),
 ($$UPDATE idem.keys SET mutation_type = NULL$$),
 ($$UPDATE idem.keys SET payload_hash = NULL, attempt = 0$$),
 ($$UPDATE idem.keys SET tenant_id = NULL$$),
 ($$UPDATE idem.keys SET recovery_point = 'x', status = 'released', lease_expires_at = NULL, expires_at = now()$$),
 ($$UPDATE idem.keys SET status = 'resolved', lease_expires_at = NULL, response_status = 200, recovery_point = 'rp'$$),
 ($$UPDATE idem.keys SET payload_hash = decode(repeat('ab', 5000), 'hex')$$),
 ($$UPDATE idem.keys SET tenant_id = repeat('x', 3000)$$),
 ($$INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, mutation_type, outcome, handler_called, retry_count, attempted_at) VALUES ('t', '\x00', 'k', '', '', 'bogus', 'replay', false, 0, now())$$),
 ($$INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, mutation_type, outcome, handler_called, retry_count, attempted_at) VALUES ('t', '\x00', 'k', '', '', 'create', 'acquired', false, 0, now())$$),
 ($$INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, mutation_type, outcome, handler_called, retry_count, attempted_at) VALUES ('t', '\x00', 'k', '', '', 'create', NULL, false, 0, now())$$),
 ($$INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, mutation_type, outcome, handler_called, retry_count, attempted_at) VALUES ('t', '\x00', 'k', '', '', 'create', 'replay', false, 0, now())$$),
 ($$INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type, attempted_at, response_status, response_headers, response_body, resolved_at) SELECT tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, lease_expires_at, created_at, expires_at, mutation_type, attempted_at, response_status, response_headers, response_body, resolved_at FROM idem.keys ON CONFLICT (tenant_id, scope_digest) DO UPDATE SET generation = 0$$),  -- named columns: 0.3.2's purge_after is generated
 ($$INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, created_at, mutation_type) VALUES ('t2', decode(repeat('00',32),'hex'), 'in_progress', 1, 1, decode(repeat('00',32),'hex'), 1, '', '', 'k', '1s', '1s', now(), 'create')$$);
DO $$
DECLARE c record; st text; cn text; msg text; det text;
BEGIN
  FOR c IN SELECT * FROM t_cases ORDER BY n LOOP
    BEGIN
      EXECUTE c.sql;
      RAISE NOTICE '% | OK', c.n;
      RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, cn = CONSTRAINT_NAME, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
      IF msg <> 'rollback' THEN
        RAISE NOTICE '% | % | constraint_name=% | % | detail=%', c.n, st, nullif(cn, ''), msg, left(regexp_replace(det, '\(.*', '(...)'), 40);
      END IF;
    END;
  END LOOP;
END $$;
SQL
}
NEW=${ATTACK_NEW_VERSION:-0.3.3}
for v in 0.3.1 "$NEW"; do
  db=attack_hp_inv_${v//./_}
  psql -X -q "$B/postgres" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  psql -X -q "$B/$db" -c "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'" \
       -c "SELECT outcome FROM idem.acquire('acme', 'inv-key-000000001', '{}'::jsonb)" >/dev/null
  { echo "\\set QUIET on"; cases; } | psql -X -q "$B/$db" 2>&1 | sed 's/^psql:[^ ]* NOTICE:  //; s/^NOTICE:  //' >"$W/$v"
  psql -X -q "$B/postgres" -c "DROP DATABASE $db"
done
echo "=== 0.3.1 (CHECK constraints)"; cat "$W/0.3.1"
echo "=== diff 0.3.1 -> $NEW (trigger)"; diff "$W/0.3.1" "$W/$NEW" && echo "no difference"
rm -rf "$W"
