-- Fail closed: acquire and complete refuse to run on a store that could lose an acknowledged
-- write (synchronous_commit off for the session or the transaction, idem.keys unlogged) with
-- ERR_NON_ATOMIC_IDEMPOTENCY_STORE (IK007), and change nothing; and a transaction that called
-- acquire or complete is refused again at COMMIT (IK007, the transaction aborts) if fsync or
-- synchronous_commit is off at that moment, because PostgreSQL reads synchronous_commit when it
-- commits. idem.allow_non_atomic_store (superuser, tests only) overrides both. (fsync = off cannot
-- be set per session; the server this suite runs on has it on, see 00_setup.)
-- The refusals at call time are shown with expect_error inside transactions that are rolled back:
-- caught or not, a refused call still makes its transaction's COMMIT fail (shown below).
\set SHOW_CONTEXT never

-- A lease to complete later, taken while the store is durable.
SELECT handle AS h1, attempt AS a1 FROM idem.acquire('t-dur', 'durable-key-0001', '{"amount":1}'::jsonb) \gset
SELECT count(*) AS records_before FROM idem.keys WHERE tenant_id = 't-dur';

--
-- synchronous_commit = off for the session
--
SET synchronous_commit = off;
BEGIN;
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0002', '{"amount":2}'::jsonb)$$);
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0002', '{"amount":2}'::text)$$);
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0002', idem.payload_hash('{"amount":2}'::jsonb))$$);
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h1', :a1, '{}', 'lost?'));
-- Even a replay or an in_progress answer is refused: acquire checks before it reads.
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0001', '{"amount":1}'::jsonb)$$);
SELECT error_hint($$SELECT idem.acquire('t-dur', 'durable-key-0002', '{"amount":2}'::jsonb)$$);
ROLLBACK;
-- Spellings of "off" are all caught.
SET synchronous_commit = false;
BEGIN;
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0002', '{"amount":2}'::jsonb)$$);
ROLLBACK;
SET synchronous_commit = 0;
BEGIN;
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0002', '{"amount":2}'::jsonb)$$);
ROLLBACK;
-- Called outside a transaction block, the refusal is what the client sees.
SELECT idem.acquire('t-dur', 'durable-key-0002', '{"amount":2}'::jsonb);
-- A refusal that is caught (a savepoint, an exception block: here expect_error) does not make the
-- transaction safe to commit: its COMMIT is refused too.
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0002', '{"amount":2}'::jsonb)$$);
RESET synchronous_commit;
-- Nothing changed: no new record, the lease still held by :a1, no response.
SELECT count(*) AS records_after FROM idem.keys WHERE tenant_id = 't-dur';
SELECT client_key, status, attempt = :a1 AS same_token, response_status FROM idem.keys WHERE tenant_id = 't-dur' ORDER BY client_key;
-- The durable levels are accepted.
SET synchronous_commit = local;
SELECT outcome FROM idem.acquire('t-dur', 'durable-key-0003', '{}'::jsonb);
SET synchronous_commit = remote_write;
SELECT outcome FROM idem.acquire('t-dur', 'durable-key-0004', '{}'::jsonb);
RESET synchronous_commit;

--
-- SET LOCAL synchronous_commit = off: refused inside that transaction only
--
BEGIN;
SET LOCAL synchronous_commit = off;
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0005', '{}'::jsonb)$$);
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h1', :a1));
-- The transaction called acquire and complete, so its COMMIT is refused (it aborts).
COMMIT;
SHOW synchronous_commit;
SELECT count(*) AS no_record FROM idem.keys WHERE client_key = 'durable-key-0005';
-- SET LOCAL synchronous_commit = off AFTER a successful complete: the COMMIT is refused and the
-- complete is rolled back with it (regression file durability_set_local_after_complete has more).
SELECT handle AS h10, attempt AS a10 FROM idem.acquire('t-dur', 'durable-key-0010', '{}'::jsonb) \gset
BEGIN;
SELECT idem.complete(:'h10', :a10, 200, '{}', 'async');
SET LOCAL synchronous_commit = off;
COMMIT;
SELECT status, attempt = :a10 AS same_token, response_status FROM idem.keys WHERE client_key = 'durable-key-0010';
-- Turned back on before COMMIT, the transaction commits: the setting at COMMIT is what counts.
BEGIN;
SELECT idem.complete(:'h10', :a10, 200, '{}', 'durable');
SET LOCAL synchronous_commit = off;
SET LOCAL synchronous_commit = on;
COMMIT;
SELECT status, response_status, response_body FROM idem.keys WHERE client_key = 'durable-key-0010';
-- A transaction that never called acquire or complete may commit asynchronously as before.
BEGIN;
SET LOCAL synchronous_commit = off;
SELECT count(*) > 0 AS reads_are_fine FROM idem.keys;
COMMIT;
-- A function cannot smuggle it in either: the setting in force when acquire runs counts.
CREATE FUNCTION acquire_async(k text) RETURNS text LANGUAGE sql SET synchronous_commit = off
  RETURN (idem.acquire('t-dur', k, '{}'::jsonb)).outcome;
SELECT expect_error($$SELECT acquire_async('durable-key-0006')$$);
DROP FUNCTION acquire_async;

--
-- idem.allow_non_atomic_store = on overrides (tests only)
--
SET synchronous_commit = off;
SET idem.allow_non_atomic_store = on;
SELECT outcome, attempt > :a1 AS new_token FROM idem.acquire('t-dur', 'durable-key-0007', '{}'::jsonb);
SELECT idem.complete(:'h1', :a1, 200, '{}', 'completed without durability');
SELECT outcome, response_body FROM idem.acquire('t-dur', 'durable-key-0001', '{"amount":1}'::jsonb);
RESET idem.allow_non_atomic_store;
BEGIN;
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0007', '{}'::jsonb)$$);
ROLLBACK;
RESET synchronous_commit;
SELECT outcome FROM idem.acquire('t-dur', 'durable-key-0007', '{}'::jsonb);

--
-- An unlogged idem.keys is refused (tried inside a transaction that is rolled back)
--
SELECT handle AS h8, attempt AS a8 FROM idem.acquire('t-dur', 'durable-key-0008', '{}'::jsonb) \gset
BEGIN;
ALTER TABLE idem.keys SET UNLOGGED;
SELECT relpersistence FROM pg_class WHERE oid = 'idem.keys'::regclass;
SELECT expect_error($$SELECT idem.acquire('t-dur', 'durable-key-0009', '{}'::jsonb)$$);
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h8', :a8));
-- The override covers this case too.
SET LOCAL idem.allow_non_atomic_store = on;
SELECT outcome FROM idem.acquire('t-dur', 'durable-key-0009', '{}'::jsonb);
ROLLBACK;
SELECT relpersistence FROM pg_class WHERE oid = 'idem.keys'::regclass;
SELECT count(*) AS no_record FROM idem.keys WHERE client_key = 'durable-key-0009';
-- Durable again: the lease taken before completes normally.
SELECT idem.complete(:'h8', :a8, 204, NULL, NULL);
SELECT outcome, response_status FROM idem.acquire('t-dur', 'durable-key-0008', '{}'::jsonb);

--
-- checkpoint refuses too: a lost checkpoint would resume from an older recovery point and
-- repeat the side effect it recorded.
--
SELECT handle AS hc, attempt AS ac FROM idem.acquire('t-dur', 'durability-checkpoint-01', '{}'::jsonb) \gset
BEGIN;
SET LOCAL synchronous_commit = off;
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'hc', :ac, 'charge_created'));
ROLLBACK;
SELECT recovery_point IS NULL AS unchanged FROM idem.keys WHERE client_key = 'durability-checkpoint-01';
