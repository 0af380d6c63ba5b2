-- purge_expired in a transaction that does not commit (reviews of 0.3.3 and 0.3.4): rolled back,
-- rolled back to a savepoint, caught in an exception block, cancelled by statement_timeout, or
-- prepared and then rolled back, it leaves every record and every retired generation as they
-- were, and no key lock. Prepared, it holds the locks of the keys it deleted until COMMIT
-- PREPARED: an acquirer of such a key is told in_progress, never handed the key's old generation.
\set SHOW_CONTEXT never
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
-- A history record of generation gen (resolved, its TTL ended `age` ago), written directly.
CREATE FUNCTION pg_temp.history(k text, gen integer, age interval) RETURNS text LANGUAGE sql AS $$
  INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,
                         caller_id, resource, client_key, lease_interval, ttl, response_status,
                         response_headers, response_body, created_at, resolved_at, expires_at, attempted_at)
  VALUES ('t-undo', idem.scope_digest('t-undo', '', '', k), 'resolved', nextval('idem.fencing_token_seq'), gen,
          idem.payload_hash('{}'::jsonb), 1, '', '', k, '30 seconds', '1 second', 200, '{}',
          convert_to('gen ' || gen, 'UTF8'), now() - age - interval '1 second', now() - age - interval '1 second',
          now() - age, now() - age - interval '1 second')
  RETURNING client_key $$;
CREATE TEMP VIEW purge_state AS
  SELECT (SELECT count(*) FROM idem.keys WHERE tenant_id = 't-undo') AS records,
         (SELECT string_agg(generation::text, ',' ORDER BY generation) FROM idem.retired_keys WHERE tenant_id = 't-undo') AS retired,
         (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 3) AS key_locks;
SELECT count(pg_temp.history('undo-key-' || lpad(g::text, 10, '0'), g + 1, make_interval(mins => 10 - g))) AS written
  FROM generate_series(1, 5) g;
-- The first key's generation 1 was purged before: its retired generation is raised to 2 by a purge.
INSERT INTO idem.retired_keys VALUES ('t-undo', idem.scope_digest('t-undo', '', '', 'undo-key-0000000001'), 1, now() - interval '1 hour');
CREATE TEMP VIEW undo_records AS
  SELECT client_key, status, generation FROM idem.keys WHERE tenant_id = 't-undo' ORDER BY client_key;
SELECT * FROM purge_state;

BEGIN;
SELECT idem.purge_expired(10) AS purged;
SELECT * FROM purge_state;
ROLLBACK;
SELECT * FROM purge_state;

BEGIN;
SAVEPOINT s;
SELECT idem.purge_expired(3) AS purged;
ROLLBACK TO SAVEPOINT s;
SELECT * FROM purge_state;
COMMIT;

DO $$ BEGIN
  BEGIN
    RAISE NOTICE 'purged %', idem.purge_expired(3);
    RAISE EXCEPTION 'the caller fails after the purge';
  EXCEPTION WHEN raise_exception THEN RAISE NOTICE 'caught: %', SQLERRM;
  END;
END $$;
SELECT * FROM purge_state;

-- The purge runs first in the target list, then the statement is cancelled.
BEGIN;
SET LOCAL statement_timeout = '200ms';
SELECT idem.purge_expired(3) AS purged, pg_sleep(5);
ROLLBACK;
SELECT * FROM purge_state;

-- Prepared: the deleted records' keys stay locked by the prepared transaction, not this session.
BEGIN;
SELECT idem.purge_expired(3) AS purged;
PREPARE TRANSACTION 'purge_not_committed';
SELECT * FROM purge_state;
SELECT outcome, generation FROM idem.acquire('t-undo', 'undo-key-0000000001', '{}'::jsonb);
SELECT outcome, generation FROM idem.acquire('t-undo', 'undo-key-0000000005', '{}'::jsonb, ttl => '1 second');
ROLLBACK PREPARED 'purge_not_committed';
SELECT * FROM purge_state;
SELECT * FROM undo_records;

-- Committed the same way, it counts: the next acquire of a purged key continues its generations.
BEGIN;
SELECT idem.purge_expired(3) AS purged;
PREPARE TRANSACTION 'purge_committed';
COMMIT PREPARED 'purge_committed';
SELECT * FROM purge_state;
SELECT * FROM undo_records;
SELECT outcome, generation FROM idem.acquire('t-undo', 'undo-key-0000000001', '{}'::jsonb);

-- Several calls in one transaction through a cursor, then one more: committed once, locks gone.
SELECT count(pg_temp.history('undo-key-' || lpad(g::text, 10, '0'), 1, interval '1 minute')) AS written FROM generate_series(6, 7) g;
BEGIN;
DECLARE c CURSOR FOR SELECT idem.purge_expired(1) AS purged FROM generate_series(1, 3);
FETCH ALL FROM c;
CLOSE c;
SELECT idem.purge_expired(1) AS fourth;
COMMIT;
SELECT * FROM purge_state;
SELECT * FROM undo_records;
DROP VIEW undo_records;
DELETE FROM idem.keys WHERE tenant_id = 't-undo';
DELETE FROM idem.retired_keys WHERE tenant_id = 't-undo';
