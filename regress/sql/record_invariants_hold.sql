-- The invariants of idem.keys and idem.mutations (0.3.2): a C row trigger in place of the CHECK
-- constraints they were, refusing exactly what those refused, with the same SQLSTATE (23514)
-- and constraint names. A rule that evaluates to NULL passes, as a CHECK does.
\set SHOW_CONTEXT never
SELECT count(*) AS check_constraints_left FROM pg_constraint
 WHERE conrelid IN ('idem.keys'::regclass, 'idem.mutations'::regclass) AND contype = 'c';
SELECT tgname, tgrelid::regclass FROM pg_trigger
 WHERE tgfoid = 'idem._check_invariants()'::regprocedure ORDER BY tgname;

BEGIN;
SELECT handle, attempt FROM idem.acquire('t-inv', 'inv-key-0000000001', '{}'::jsonb) \gset
SELECT idem.complete(:'handle', :attempt, 201, '{}', 'done');
COMMIT;
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-inv', 'inv-key-0000000002', '{}'::jsonb) \gset
-- Each rule, broken on a resolved record (k1) or a leased one (k2); nothing changes.
CREATE TEMP TABLE breaks (rule text, sql text);
INSERT INTO breaks VALUES
  ('attempt', $$UPDATE idem.keys SET attempt = 0 WHERE client_key = 'inv-key-0000000001'$$),
  ('lease of a resolved record', $$UPDATE idem.keys SET lease_expires_at = now() WHERE client_key = 'inv-key-0000000001'$$),
  ('leased without a lease', $$UPDATE idem.keys SET lease_expires_at = NULL WHERE client_key = 'inv-key-0000000002'$$),
  ('resolved without a response', $$UPDATE idem.keys SET response_status = NULL WHERE client_key = 'inv-key-0000000001'$$),
  ('generation', $$UPDATE idem.keys SET generation = 0 WHERE client_key = 'inv-key-0000000001'$$),
  ('resolved never expiring', $$UPDATE idem.keys SET expires_at = NULL WHERE client_key = 'inv-key-0000000001'$$),
  ('checkpointed work expiring', $$UPDATE idem.keys SET recovery_point = 'charged' WHERE client_key = 'inv-key-0000000002'$$),
  ('mutation type', $$UPDATE idem.keys SET mutation_type = 'transfer' WHERE client_key = 'inv-key-0000000001'$$),
  ('payload hash length', $$UPDATE idem.keys SET payload_hash = '\x00' WHERE client_key = 'inv-key-0000000001'$$),
  ('response status', $$UPDATE idem.keys SET response_status = 600 WHERE client_key = 'inv-key-0000000001'$$),
  ('scope digest length', $$UPDATE idem.keys SET scope_digest = '\x00' WHERE client_key = 'inv-key-0000000001'$$),
  ('status', $$UPDATE idem.keys SET status = 'done', lease_expires_at = NULL WHERE client_key = 'inv-key-0000000002'$$),
  ('tenant', $$UPDATE idem.keys SET tenant_id = '' WHERE client_key = 'inv-key-0000000001'$$),
  ('key scope', $$UPDATE idem.keys SET key_scope = 'global' WHERE client_key = 'inv-key-0000000001'$$),
  ('audit mutation type', $$INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, mutation_type, outcome, handler_called, attempted_at, retry_count) VALUES ('t-inv', '\x00', 'k', '', '', 'transfer', 'replay', false, now(), 0)$$),
  ('audit outcome', $$INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, mutation_type, outcome, handler_called, attempted_at, retry_count) VALUES ('t-inv', '\x00', 'k', '', '', 'create', 'charged', false, now(), 0)$$);
SELECT rule, expect_error(sql) AS refused FROM breaks;
SELECT client_key, status, attempt > 0 AS attempt_kept, generation, response_status, mutation_type,
       octet_length(payload_hash) AS hash_bytes, octet_length(scope_digest) AS digest_bytes, tenant_id
  FROM idem.keys WHERE tenant_id = 't-inv' ORDER BY client_key;

-- The error carries what a CHECK's did: the constraint, table and schema fields and the failing row.
CREATE FUNCTION pg_temp.check_fields(sql text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE v_constraint text; v_table text; v_schema text; v_detail text;
BEGIN
  EXECUTE sql;
  RETURN 'no error';
EXCEPTION WHEN check_violation THEN
  GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME, v_table = TABLE_NAME, v_schema = SCHEMA_NAME, v_detail = PG_EXCEPTION_DETAIL;
  RETURN format('%s.%s %s; detail starts %s', v_schema, v_table, v_constraint, left(v_detail, 36));
END $f$;
SELECT pg_temp.check_fields($$UPDATE idem.keys SET generation = 0 WHERE client_key = 'inv-key-0000000001'$$) AS fields;
-- A NOT NULL column left NULL is refused as NOT NULL (23502), before any rule, as it was.
SELECT expect_error($$UPDATE idem.keys SET attempt = NULL, generation = 0 WHERE client_key = 'inv-key-0000000001'$$) AS not_null_first;
-- A rule that evaluates to NULL passes, as a CHECK does: a released record has no response
-- (response_status NULL in the range rule), and changing the leased record into one is allowed.
SELECT expect_error($$UPDATE idem.keys SET status = 'released', lease_expires_at = NULL,
                       expires_at = now() + interval '1 day' WHERE client_key = 'inv-key-0000000002'$$) AS released_without_response;
SELECT status, response_status IS NULL AS no_response FROM idem.keys WHERE client_key = 'inv-key-0000000002';
-- The trigger refuses to run as anything but a BEFORE row trigger.
CREATE TEMP TABLE misuse (x int);
CREATE TRIGGER misuse_after AFTER INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION idem._check_invariants();
SELECT expect_error($$INSERT INTO misuse VALUES (1)$$) AS after_trigger_refused;
-- They hold in a replica session too (a logical replication apply worker), as CHECKs do.
BEGIN;
SET LOCAL session_replication_role = replica;
SELECT expect_error($$UPDATE idem.keys SET attempt = 0 WHERE client_key = 'inv-key-0000000001'$$) AS refused_as_replica;
ROLLBACK;
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid IN ('idem.keys'::regclass, 'idem.mutations'::regclass, 'idem.tenant_bindings'::regclass)
   AND tgname IN ('keys_invariants', 'mutations_invariants', 'tenant_bindings_changed', 'tenant_bindings_truncated') ORDER BY tgname;
