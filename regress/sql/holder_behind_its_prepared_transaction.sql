-- Bug regression (adversarial review of 0.1.1): a holder whose own earlier transaction of the
-- lease was prepared and left (PREPARE TRANSACTION after a checkpoint) blocked in complete until
-- that transaction ended — forever, if it was orphaned. Fixed: a holder waits for the key's lock
-- at most idem.wait_timeout, then gets ERR_IDEMPOTENCY_IN_PROGRESS (its lease is still its own;
-- nothing changed), and completes once that transaction is finished.
\set SHOW_CONTEXT never
SELECT handle AS h, attempt AS a FROM idem.acquire('t-own', 'own-prepared-key-1', '{}'::jsonb, lease => '1 hour') \gset
BEGIN;
SELECT idem.checkpoint(:'h', :a, 'charge_created') IS NOT NULL AS checkpointed;
PREPARE TRANSACTION 'idem_holder_checkpoint';
SET idem.wait_timeout = '200ms';
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h', :a, '{}', 'done'), jsonb_build_object('a', :a)) ~ '^IK003 ' AS holder_told_to_retry;
SELECT error_hint(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h', :a, '{}', 'done')) AS hint;
SELECT status, recovery_point FROM idem.keys WHERE client_key = 'own-prepared-key-1';
COMMIT PREPARED 'idem_holder_checkpoint';
SELECT idem.complete(:'h', :a, 200, '{}', 'done');
SELECT status, recovery_point FROM idem.keys WHERE client_key = 'own-prepared-key-1';
RESET idem.wait_timeout;
