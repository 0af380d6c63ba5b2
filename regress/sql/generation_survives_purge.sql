-- Bug regression: the generation restarted at 1 after purge, so order ids and processor keys
-- derived from (tenant, key, generation) could repeat. Fixed: purge_expired leaves the key's last
-- generation in idem.retired_keys and a reused key continues from it; the high-water mark is
-- forgotten only after idem.history_retention (90 days by default) without use.
\set SHOW_CONTEXT never
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session
SHOW idem.history_retention;

CREATE FUNCTION resolve_once(payload jsonb) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE r idem.acquire_result;
BEGIN
  r := idem.acquire('t-gen', 'generation-key-01', payload, ttl => '50 milliseconds');
  PERFORM idem.complete(r.handle, r.attempt, 200, '{}', convert_to(payload::text, 'UTF8'));
  RETURN r.generation;
END $$;
-- Three generations, each purged before the next.
SELECT resolve_once('{"n":1}') AS gen;
SELECT pg_sleep(0.1);
SELECT idem.purge_expired() AS purged;
SELECT generation FROM idem.retired_keys WHERE tenant_id = 't-gen';
SELECT resolve_once('{"n":2}') AS gen;
SELECT pg_sleep(0.1);
SELECT idem.purge_expired() AS purged;
SELECT resolve_once('{"n":3}') AS gen;
SELECT pg_sleep(0.1);
-- Not yet purged: the record itself says generation 3, history; the next one is 4.
SELECT resolve_once('{"n":4}') AS gen;
SELECT pg_sleep(0.1);
SELECT idem.purge_expired() AS purged;
SELECT generation FROM idem.retired_keys WHERE tenant_id = 't-gen';

-- After the history retention the high-water mark goes too (a key unused for 90 days starts over).
SET idem.history_retention = '1s';
SELECT pg_sleep(1.1);
SELECT idem.purge_expired() AS purged_records;
SELECT count(*) AS retired_left FROM idem.retired_keys WHERE tenant_id = 't-gen';
RESET idem.history_retention;
SELECT resolve_once('{"n":5}') AS gen;
-- Services cannot shorten the history.
SET ROLE idem_service;
SELECT expect_error($$SET idem.history_retention = '1s'$$) AS service_sets_retention;
RESET ROLE;
