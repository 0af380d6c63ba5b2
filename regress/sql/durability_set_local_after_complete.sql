-- Bug regression: fail closed must hold for the setting in force at COMMIT, not only for the one
-- in force when acquire/complete run. PostgreSQL reads synchronous_commit when the transaction
-- commits, so "SET LOCAL synchronous_commit = off" after complete (or a function-level SET
-- synchronous_commit = on around complete in an asynchronous session) used to commit the
-- completed response asynchronously: acknowledged, possibly lost in a crash, and the retry
-- executed twice - what ERR_NON_ATOMIC_IDEMPOTENCY_STORE exists to prevent.
-- Fixed: a transaction that called acquire or complete is checked again just before it commits;
-- with fsync or synchronous_commit off then, the COMMIT fails with IK007, the transaction aborts
-- and nothing is stored. The COMMIT errors are shown by SQLSTATE only (VERBOSITY sqlstate):
-- durability.sql shows the message.
\set SHOW_CONTEXT never
SELECT count(*) AS rows_before FROM idem.keys \gset

--
-- SET LOCAL after complete, in the same transaction
--
BEGIN;
SELECT handle AS h1, attempt AS a1 FROM idem.acquire('t-durc', 'durable-commit-01', '{"amount":1}'::jsonb) \gset
SELECT idem.complete(:'h1', :a1, 201, '{}', 'paid');
SET LOCAL synchronous_commit = off;
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
-- The acquire and the complete were rolled back together: no record, the row count unchanged.
SELECT count(*) AS nothing_stored FROM idem.keys WHERE tenant_id = 't-durc' AND client_key = 'durable-commit-01';
SELECT count(*) = :rows_before AS row_count_unchanged FROM idem.keys;
-- The key is free: a retry executes (acquired), it does not replay a response that was never
-- durable.
SELECT outcome FROM idem.acquire('t-durc', 'durable-commit-01', '{"amount":1}'::jsonb);

--
-- An asynchronous session that wraps complete in a function setting synchronous_commit = on
--
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-durc', 'durable-commit-02', '{"amount":2}'::jsonb) \gset
SELECT count(*) AS rows_before FROM idem.keys \gset
CREATE FUNCTION complete_synchronously(h text, a bigint) RETURNS void
  LANGUAGE sql SET synchronous_commit = on
  RETURN idem.complete(h, a, 201, '{}'::jsonb, 'paid'::bytea);
SET synchronous_commit = off;
BEGIN;
SELECT complete_synchronously(:'h2', :a2);
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
RESET synchronous_commit;
-- The complete was rolled back: still leased to :a2, no response.
SELECT status, attempt = :a2 AS same_token, response_status FROM idem.keys WHERE tenant_id = 't-durc' AND client_key = 'durable-commit-02';
SELECT count(*) = :rows_before AS row_count_unchanged FROM idem.keys;
-- The holder keeps its lease and completes once the commit is durable; the response replays.
SELECT complete_synchronously(:'h2', :a2);
SELECT outcome, response_status, response_body FROM idem.acquire('t-durc', 'durable-commit-02', '{"amount":2}'::jsonb);
DROP FUNCTION complete_synchronously;
