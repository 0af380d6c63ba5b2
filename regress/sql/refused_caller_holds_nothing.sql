-- Bug regression: a contender that was refused kept the key's locks (it had taken the advisory
-- lock, and a row lock, on the way to a write that its second read ruled out). Fixed: acquire
-- takes the key's lock only for a decision that writes, and gives it back (idem._unlock_key)
-- when the read under it refuses. The two-session cases are in the isolation spec of the same
-- name; here: the mechanism, and the single-session paths.
\set SHOW_CONTEXT never
CREATE FUNCTION my_key_locks() RETURNS bigint LANGUAGE sql AS
  $$SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype IN ('advisory', 'tuple')$$;

-- _unlock_key gives back one hold taken by the same resource owner (acquire takes and gives back
-- within one call): a lock held twice stays held once.
BEGIN;
DO $$
BEGIN
  PERFORM idem._try_lock_key(42);
  PERFORM idem._try_lock_key(42);
  RAISE NOTICE 'released: %, still held: %', idem._unlock_key(42), my_key_locks();
  RAISE NOTICE 'released: %, held: %', idem._unlock_key(42), my_key_locks();
END $$;
ROLLBACK;
-- ... also inside the caller's savepoint, for a lock taken there.
BEGIN;
SAVEPOINT s;
DO $$
BEGIN
  PERFORM idem._try_lock_key(43);
  RAISE NOTICE 'released: %, held: %', idem._unlock_key(43), my_key_locks();
END $$;
ROLLBACK;
-- ... and a lock this transaction held before (a holder meeting its key again) stays held.
BEGIN;
SELECT idem._try_lock_key(44) AS held_before;
DO $$
BEGIN
  PERFORM idem._try_lock_key(44);
  RAISE NOTICE 'released: %, still held: %', idem._unlock_key(44), my_key_locks();
END $$;
ROLLBACK;

-- Each refusal, in an open transaction: nothing held afterwards.
SELECT handle AS h, attempt AS a FROM idem.acquire('t-refuse', 'refuse-key-000001', '{"n":1}'::jsonb) \gset
SELECT idem.complete(:'h', :a, 200, '{}', 'one');
SELECT handle AS hl, attempt AS al FROM idem.acquire('t-refuse', 'refuse-key-000002', '{"n":2}'::jsonb, lease => '1 hour') \gset
BEGIN;
SELECT outcome FROM idem.acquire('t-refuse', 'refuse-key-000001', '{"n":1}'::jsonb);
SELECT outcome FROM idem.acquire('t-refuse', 'refuse-key-000001', '{"n":9}'::jsonb);
SELECT outcome FROM idem.acquire('t-refuse', 'refuse-key-000002', '{"n":2}'::jsonb);
SET LOCAL idem.wait_timeout = '100ms';
SELECT outcome FROM idem.acquire('t-refuse', 'refuse-key-000002', '{"n":2}'::jsonb, on_busy => 'wait');
SELECT my_key_locks() AS held_after_refusals;
COMMIT;

-- A transaction that holds a key still holds it after meeting it again (in_progress): the key's
-- lock and, under the key scope tenant, its owner lock (0.3.6).
BEGIN;
SELECT outcome FROM idem.acquire('t-refuse', 'refuse-key-000003', '{"n":3}'::jsonb);
SELECT my_key_locks() AS held_as_holder;
SELECT outcome FROM idem.acquire('t-refuse', 'refuse-key-000003', '{"n":3}'::jsonb);
SELECT my_key_locks() AS still_held_as_holder;
ROLLBACK;

-- A refusal inside the caller's own savepoint leaves nothing either.
BEGIN;
SAVEPOINT s;
SELECT outcome FROM idem.acquire('t-refuse', 'refuse-key-000002', '{"n":2}'::jsonb);
RELEASE SAVEPOINT s;
SELECT my_key_locks() AS held;
COMMIT;
-- The live holder completes without waiting.
SELECT idem.complete(:'hl', :al, 200, '{}', 'two');
SELECT status FROM idem.keys WHERE tenant_id = 't-refuse' AND client_key = 'refuse-key-000002';
-- An acquire rolled back to a savepoint, or caught in an exception block, leaves neither the
-- record nor the key's lock: the same transaction then acquires the key afresh, even with
-- another payload (reviews of 0.3.2 and 0.3.3).
BEGIN;
SAVEPOINT s;
SELECT outcome, generation FROM idem.acquire('t-refuse', 'refuse-key-rolled-back-1', '{"n":1}'::jsonb);
ROLLBACK TO SAVEPOINT s;
SELECT my_key_locks() AS held_after_rollback_to;
SELECT outcome, generation FROM idem.acquire('t-refuse', 'refuse-key-rolled-back-1', '{"n":2}'::jsonb);
COMMIT;
DO $$
DECLARE r record;
BEGIN
  BEGIN
    SELECT * INTO r FROM idem.acquire('t-refuse', 'refuse-key-rolled-back-2', '{"n":1}'::jsonb);
    RAISE NOTICE 'inside: %', r.outcome;
    RAISE EXCEPTION 'the handler failed';
  EXCEPTION WHEN raise_exception THEN
    RAISE NOTICE 'caught: %, key locks held: %', SQLERRM, my_key_locks();
  END;
  SELECT * INTO r FROM idem.acquire('t-refuse', 'refuse-key-rolled-back-2', '{"n":2}'::jsonb);
  RAISE NOTICE 'after: % (generation %)', r.outcome, r.generation;
END $$;
SELECT client_key, status, payload_hash = idem.payload_hash('{"n":2}'::jsonb) AS second_payload
  FROM idem.keys WHERE tenant_id = 't-refuse' AND client_key LIKE 'refuse-key-rolled-back-%' ORDER BY 1;
