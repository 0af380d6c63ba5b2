-- Bug regression: on_busy => 'wait' under REPEATABLE READ or SERIALIZABLE waited for the
-- holder's whole transaction (forever behind an orphaned prepared transaction) and then failed
-- with 40001 anyway. Fixed: an older snapshot answers at once (it could not read the holder's
-- result); READ COMMITTED waits, but never longer than idem.wait_timeout.
\set SHOW_CONTEXT never

-- A prepared transaction holds a new key (its insert and the key's lock) for good.
BEGIN;
SELECT outcome FROM idem.acquire('t-prep', 'prepared-key-0001', '{"n":1}'::jsonb);
PREPARE TRANSACTION 'idem_prepared_holder';

BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT outcome, retry_after FROM idem.acquire('t-prep', 'prepared-key-0001', '{"n":1}'::jsonb, on_busy => 'wait');
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT outcome, retry_after FROM idem.acquire('t-prep', 'prepared-key-0001', '{"n":1}'::jsonb, on_busy => 'wait');
COMMIT;
-- READ COMMITTED waits up to idem.wait_timeout, then answers in_progress holding nothing.
SET idem.wait_timeout = '200ms';
BEGIN;
SELECT outcome, retry_after FROM idem.acquire('t-prep', 'prepared-key-0001', '{"n":1}'::jsonb, on_busy => 'wait');
SELECT count(*) AS locks_held FROM pg_locks WHERE pid = pg_backend_pid() AND locktype IN ('advisory', 'tuple');
COMMIT;
-- The caller's lock_timeout is as it was.
SHOW lock_timeout;
-- Reject mode answers at once at every level.
SELECT outcome FROM idem.acquire('t-prep', 'prepared-key-0001', '{"n":1}'::jsonb);

-- Once the prepared transaction commits, its lease is a committed, live lease: RC waits for it
-- (polling) until the deadline, RR answers at once.
COMMIT PREPARED 'idem_prepared_holder';
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT outcome FROM idem.acquire('t-prep', 'prepared-key-0001', '{"n":1}'::jsonb, on_busy => 'wait');
COMMIT;
SELECT outcome FROM idem.acquire('t-prep', 'prepared-key-0001', '{"n":1}'::jsonb, on_busy => 'wait');
-- A short lease that runs out while the waiter polls: the waiter takes over (resumed).
SELECT outcome FROM idem.acquire('t-prep', 'prepared-key-0002', '{"n":2}'::jsonb, lease => '100 milliseconds');
SET idem.wait_timeout = '5s';
SELECT outcome, generation FROM idem.acquire('t-prep', 'prepared-key-0002', '{"n":2}'::jsonb, on_busy => 'wait');
RESET idem.wait_timeout;
SELECT count(*) AS prepared_left FROM pg_prepared_xacts WHERE gid = 'idem_prepared_holder';
