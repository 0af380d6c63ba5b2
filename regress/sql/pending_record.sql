-- The pending record (0.4.0, docs/hot-path.md): acquire of a new key takes its lock and writes
-- nothing; complete in the same transaction writes the record once, resolved. Anything else in
-- the backend that reads idem.keys first sees it written in_progress, as before; a savepoint
-- rolled back drops one made inside it and gives back one it wrote; COMMIT and PREPARE write it.
\set SHOW_CONTEXT never
CREATE FUNCTION keys_written() RETURNS text LANGUAGE sql AS $$
  SELECT format('inserted %s, updated %s', n_tup_ins, n_tup_upd)
    FROM pg_stat_xact_user_tables WHERE relid = 'idem.keys'::regclass
$$;
-- The key locks this backend holds (a key's own and, under the key scope tenant, its owner's).
CREATE FUNCTION key_locks_held() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND objsubid = 3
$$;
CREATE TEMP TABLE got (step text PRIMARY KEY, r idem.acquire_result);

-- One transaction, the service's flow: one INSERT of the record and nothing else.
BEGIN;
INSERT INTO got SELECT 'one', a FROM idem.acquire('t-pend', 'pending-key-00001', '{"n":1}'::jsonb) a;
SELECT (r).outcome, (r).generation, keys_written() FROM got WHERE step = 'one';
SELECT key_locks_held();
SELECT idem.complete((r).handle, (r).attempt, 201, '{"content-type":"application/json"}', '{"id":1}', order_id => 'ord-1') FROM got WHERE step = 'one';
SELECT keys_written();
COMMIT;
SELECT status, response_status, response_headers, convert_from(response_body, 'UTF8') AS body, order_id,
       generation, attempts_in_generation, lease_expires_at IS NULL AS no_lease,
       expires_at = resolved_at + ttl AS expires_after_ttl, attempt = (SELECT (r).attempt FROM got WHERE step = 'one') AS same_token,
       key_scope, payload_members IS NOT NULL AS members_kept
  FROM idem.keys WHERE client_key = 'pending-key-00001';
SELECT outcome, generation, attempt = (SELECT (r).attempt FROM got WHERE step = 'one') AS same_token, retry_count, handler_called, order_id,
       attempted_at = (SELECT created_at FROM idem.keys WHERE client_key = 'pending-key-00001') AS attempted_at_acquire
  FROM idem.mutations WHERE client_key = 'pending-key-00001' AND outcome = 'completed';
SELECT outcome, response_status, order_id FROM idem.acquire('t-pend', 'pending-key-00001', '{"n":1}'::jsonb);

-- The same flow with idem.pending_record off: written at acquire, updated at complete.
SET idem.pending_record = off;
BEGIN;
INSERT INTO got SELECT 'off', a FROM idem.acquire('t-pend', 'pending-key-00002', '{"n":2}'::jsonb) a;
SELECT keys_written();
SELECT idem.complete((r).handle, (r).attempt, 201, '{}', 'two') FROM got WHERE step = 'off';
SELECT keys_written();
COMMIT;
RESET idem.pending_record;

-- A read of idem.keys in the transaction (here a plain SELECT; a view, a forensic function or a
-- trigger alike) sees the record, written in_progress; complete then updates it.
BEGIN;
INSERT INTO got SELECT 'read', a FROM idem.acquire('t-pend', 'pending-key-00003', '{"n":3}'::jsonb) a;
SELECT status, attempt = (SELECT (r).attempt FROM got WHERE step = 'read') AS same_token FROM idem.keys WHERE client_key = 'pending-key-00003';
SELECT keys_written();
SELECT status, why FROM idem.stuck_leases WHERE client_key = 'pending-key-00003';
SELECT idem.complete((r).handle, (r).attempt, 200, '{}', 'three') FROM got WHERE step = 'read';
SELECT keys_written();
COMMIT;
SELECT status, response_status FROM idem.keys WHERE client_key = 'pending-key-00003';

-- A second acquire of the key in its transaction answers as it did when the record was written.
BEGIN;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00004', '{"n":4}'::jsonb);
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00004', '{"n":4}'::jsonb);
SELECT keys_written();
ROLLBACK;
SET idem.pending_record = off;
BEGIN;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00004', '{"n":4}'::jsonb);
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00004', '{"n":4}'::jsonb);
ROLLBACK;
RESET idem.pending_record;
SELECT count(*) AS rolled_back FROM idem.keys WHERE client_key = 'pending-key-00004';

-- A lease that commits alone (Client::begin): written in_progress at COMMIT.
BEGIN;
INSERT INTO got SELECT 'alone', a FROM idem.acquire('t-pend', 'pending-key-00005', '{"n":5}'::jsonb) a;
COMMIT;
SELECT status, attempt = (SELECT (r).attempt FROM got WHERE step = 'alone') AS same_token, lease_expires_at > now() AS leased
  FROM idem.keys WHERE client_key = 'pending-key-00005';
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00005', '{"n":5}'::jsonb);
SELECT idem.complete((r).handle, (r).attempt, 200, '{}', 'five') FROM got WHERE step = 'alone';
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00005';

-- Savepoints. Made inside one rolled back: no record, no lock.
BEGIN;
SAVEPOINT s;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00006', '{"n":6}'::jsonb);
ROLLBACK TO s;
SELECT key_locks_held();
COMMIT;
SELECT count(*) AS records FROM idem.keys WHERE client_key = 'pending-key-00006';
-- Completed inside one rolled back: still held and pending, in_progress at COMMIT.
BEGIN;
INSERT INTO got SELECT 'sp-complete', a FROM idem.acquire('t-pend', 'pending-key-00007', '{"n":7}'::jsonb) a;
SAVEPOINT s;
SELECT idem.complete((r).handle, (r).attempt, 200, '{}', 'seven') FROM got WHERE step = 'sp-complete';
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00007';
ROLLBACK TO s;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00007';
COMMIT;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00007';
-- Written by a read inside one rolled back: pending again, and complete writes it resolved.
BEGIN;
INSERT INTO got SELECT 'sp-read', a FROM idem.acquire('t-pend', 'pending-key-00008', '{"n":8}'::jsonb) a;
SAVEPOINT s;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00008';
ROLLBACK TO s;
SELECT idem.complete((r).handle, (r).attempt, 200, '{}', 'eight') FROM got WHERE step = 'sp-read';
COMMIT;
SELECT status, convert_from(response_body, 'UTF8') AS body FROM idem.keys WHERE client_key = 'pending-key-00008';
-- Written inside a savepoint released, then that savepoint's parent rolled back: gone with it.
BEGIN;
SAVEPOINT outer_s;
INSERT INTO got SELECT 'sp-nested', a FROM idem.acquire('t-pend', 'pending-key-00009', '{"n":9}'::jsonb) a;
SAVEPOINT inner_s;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00009';
RELEASE inner_s;
ROLLBACK TO outer_s;
SELECT count(*) AS records, key_locks_held() FROM idem.keys WHERE client_key = 'pending-key-00009';
COMMIT;
-- Acquired inside a savepoint released: its parent's, completed there.
BEGIN;
SAVEPOINT s;
INSERT INTO got SELECT 'sp-release', a FROM idem.acquire('t-pend', 'pending-key-00010', '{"n":10}'::jsonb) a;
RELEASE s;
SELECT idem.complete((r).handle, (r).attempt, 200, '{}', 'ten') FROM got WHERE step = 'sp-release';
SELECT keys_written();
COMMIT;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00010';
-- A PL/pgSQL block that reads the record and fails is a savepoint rolled back too.
BEGIN;
INSERT INTO got SELECT 'block', a FROM idem.acquire('t-pend', 'pending-key-00011', '{"n":11}'::jsonb) a;
DO $$
BEGIN
  PERFORM 1 FROM idem.keys WHERE client_key = 'pending-key-00011';
  RAISE EXCEPTION 'handler failed';
EXCEPTION WHEN raise_exception THEN NULL;
END $$;
SELECT idem.complete((r).handle, (r).attempt, 200, '{}', 'eleven') FROM got WHERE step = 'block';
COMMIT;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00011';

-- A complete with the wrong secret or attempt writes nothing pending and is refused as before;
-- the record is then written in_progress by the refusal's own reads.
BEGIN;
INSERT INTO got SELECT 'wrong', a FROM idem.acquire('t-pend', 'pending-key-00012', '{"n":12}'::jsonb) a;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', left((r).handle, -32) || repeat('0', 32), (r).attempt, '{}', 'x'), jsonb_build_object('held', (r).attempt))
  FROM got WHERE step = 'wrong';
ROLLBACK;
BEGIN;
INSERT INTO got SELECT 'wrong-attempt', a FROM idem.acquire('t-pend', 'pending-key-00013', '{"n":13}'::jsonb) a;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', (r).handle, (r).attempt + 1000, '{}', 'x'), jsonb_build_object('wrong', (r).attempt + 1000, 'held', (r).attempt))
  FROM got WHERE step = 'wrong-attempt';
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00013';
ROLLBACK;

-- A service role: the record is written as acquire's owner, whoever reads or commits.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_pending_svc;
RESET client_min_messages;
CREATE ROLE regress_pending_svc NOLOGIN IN ROLE idem_service;
SELECT idem.bind_tenant('regress_pending_svc', 't-pend-svc');
SET ROLE regress_pending_svc;
BEGIN;
SELECT outcome FROM idem.acquire('t-pend-svc', 'pending-key-00014', '{"n":14}'::jsonb);
COMMIT;
RESET ROLE;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00014';
SELECT idem.unbind_tenant('regress_pending_svc', 't-pend-svc');
DROP ROLE regress_pending_svc;

-- Bug regression (found by an attack on the change): the commit-time write ran under the
-- session's search_path, so a service that put a schema of its own first could have the
-- extension's owner run its operator "+" (the INSERT's now + lease). Fixed: the write pins
-- search_path to pg_catalog, pg_temp, as the SECURITY DEFINER functions do.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS pending_evil CASCADE;
DROP ROLE IF EXISTS regress_pending_evil;
RESET client_min_messages;
CREATE ROLE regress_pending_evil NOLOGIN IN ROLE idem_service;
SELECT idem.bind_tenant('regress_pending_evil', 't-pend-evil');
CREATE SCHEMA pending_evil AUTHORIZATION regress_pending_evil;
SET ROLE regress_pending_evil;
CREATE TABLE pending_evil.ran_as (who name);
CREATE FUNCTION pending_evil.plus(t timestamptz, i interval) RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pending_evil.ran_as VALUES (current_user);
  RETURN pg_catalog.timestamptz_pl_interval(t, i);
END $$;
CREATE OPERATOR pending_evil.+ (LEFTARG = timestamptz, RIGHTARG = interval, FUNCTION = pending_evil.plus);
BEGIN;
SELECT outcome FROM idem.acquire('t-pend-evil', 'pending-key-00017', '{"n":17}'::jsonb);
SET LOCAL search_path = pending_evil, pg_catalog;
COMMIT;
SELECT count(*) AS ran_their_operator FROM pending_evil.ran_as;
RESET ROLE;
SELECT status, lease_expires_at = created_at + lease_interval AS lease_from_created FROM idem.keys WHERE client_key = 'pending-key-00017';
-- The same for the executor hook's write, from a read in the transaction.
BEGIN;
SELECT outcome FROM idem.acquire('t-pend-evil', 'pending-key-00018', '{"n":18}'::jsonb);
SET LOCAL search_path = pending_evil, pg_catalog;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00018';
COMMIT;
SELECT count(*) AS ran_their_operator FROM pending_evil.ran_as;
DROP SCHEMA pending_evil CASCADE;
SELECT idem.unbind_tenant('regress_pending_evil', 't-pend-evil');
DROP ROLE regress_pending_evil;

-- Bug regressions (the same attack): a read in the statement after the one that wrote the record
-- shared that statement's snapshot and missed it; idem.handler_key and idem.stats are VOLATILE
-- now (a snapshot per statement), so two keys' processor keys come in one statement.
BEGIN;
INSERT INTO got SELECT 'hk1', a FROM idem.acquire('t-pend', 'pending-key-00019', '{"n":19}'::jsonb) a;
INSERT INTO got SELECT 'hk2', a FROM idem.acquire('t-pend', 'pending-key-00020', '{"n":20}'::jsonb) a;
SELECT idem.handler_key((a.r).handle, (a.r).attempt) = (a.r).handler_key AS first_key,
       idem.handler_key((b.r).handle, (b.r).attempt) = (b.r).handler_key AS second_key
  FROM got a, got b WHERE a.step = 'hk1' AND b.step = 'hk2';
SELECT g, idem.handler_key((r).handle, (r).attempt) = (r).handler_key AS same_key FROM got, generate_series(1, 2) g WHERE step = 'hk1';
ROLLBACK;
-- A transaction made READ ONLY after its acquire: the record is written (as acquire wrote it
-- before the switch), and the transaction stays read-only.
CREATE TABLE pending_ro_probe (n int);
BEGIN;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00021', '{"n":21}'::jsonb);
SET TRANSACTION READ ONLY;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00021';
SELECT expect_error('INSERT INTO pending_ro_probe VALUES (1)') AS still_read_only;
ROLLBACK;
BEGIN;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00022', '{"n":22}'::jsonb);
SET TRANSACTION READ ONLY;
COMMIT;
SELECT status FROM idem.keys WHERE client_key = 'pending-key-00022';
DROP TABLE pending_ro_probe;

-- An idem.key_scope changed after acquire: the record keeps the scope it was acquired under.
BEGIN;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00015', '{"n":15}'::jsonb);
SET LOCAL idem.key_scope = route;
COMMIT;
SELECT key_scope FROM idem.keys WHERE client_key = 'pending-key-00015';
DROP FUNCTION keys_written();
DROP FUNCTION key_locks_held();

-- DROP EXTENSION in the holder's transaction takes a pending record with it, as it took an
-- inserted one: the COMMIT succeeds.
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_pending_drop;
\c idem_pending_drop
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency;
RESET client_min_messages;
BEGIN;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00016', '{"n":16}'::jsonb);
DROP EXTENSION pg_idempotency;
COMMIT;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'pg_idempotency';
-- Dropped and created again in that transaction: the new store does not receive it.
CREATE EXTENSION pg_idempotency;
BEGIN;
SELECT outcome FROM idem.acquire('t-pend', 'pending-key-00023', '{"n":23}'::jsonb);
DROP EXTENSION pg_idempotency;
CREATE EXTENSION pg_idempotency;
COMMIT;
SELECT count(*) AS records FROM idem.keys;
\c :regress_db
DROP DATABASE idem_pending_drop;
