-- The upgrade chain, tested the way contrib/amcheck does: install the released 0.1.0, make
-- records in every state, ALTER EXTENSION ... UPDATE to 0.1.1, and check that each record behaves
-- as 0.1.1 says; then UPDATE to the newest version, check the old records still replay and are
-- audited, and that the catalog equals a fresh install's.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_upgrade_old;
CREATE DATABASE idem_upgrade_fresh;
\c idem_upgrade_old
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '0.1.0';
-- resolved: replays after the update
SELECT handle AS h1, attempt AS a1 FROM idem.acquire('t-up', 'upgrade-key-00001', '{"n":1}'::jsonb) \gset
SELECT idem.complete(:'h1', :a1, 201, '{"Location":"/orders/1"}', 'order one');
-- in_progress with a live lease: busy after the update, and its holder can still complete
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-up', 'upgrade-key-00002', '{"n":2}'::jsonb, lease => '1 hour') \gset
-- released after a checkpoint, TTL already past: 0.1.0 would purge it; 0.1.1 keeps it to resume
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-up', 'upgrade-key-00003', '{"n":3}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.checkpoint(:'h3', :a3, 'charge_created', '{"charge":"ch_3"}') IS NOT NULL AS checkpointed;
SELECT idem.release(:'h3', :a3, 'timeout');
-- abandoned lease without a checkpoint: becomes history a TTL after its lease
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-up', 'upgrade-key-00004', '{"n":4}'::jsonb, lease => '50 milliseconds', ttl => '50 milliseconds') \gset
-- released without a checkpoint: a fresh attempt
SELECT handle AS h5, attempt AS a5 FROM idem.acquire('t-up', 'upgrade-key-00005', '{"n":5}'::jsonb) \gset
SELECT idem.release(:'h5', :a5, 'transient');
SELECT pg_sleep(0.2);
SELECT client_key, status, expires_at IS NULL AS no_expiry FROM idem.keys ORDER BY client_key;

ALTER EXTENSION pg_idempotency UPDATE TO '0.1.1';
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT client_key, status, expires_at IS NULL AS no_expiry, expires_at = lease_expires_at + ttl AS history_after_lease_and_ttl
  FROM idem.keys ORDER BY client_key;
SELECT idem.purge_expired() AS purged;
SELECT client_key FROM idem.keys ORDER BY client_key;
SELECT outcome, response_status, response_headers, convert_from(response_body, 'UTF8') AS body
  FROM idem.acquire('t-up', 'upgrade-key-00001', '{"n":1}'::jsonb);
SELECT outcome FROM idem.acquire('t-up', 'upgrade-key-00002', '{"n":2}'::jsonb);
SELECT idem.complete(:'h2', :a2, 200, '{}', 'two');
SELECT outcome, convert_from(response_body, 'UTF8') AS body FROM idem.acquire('t-up', 'upgrade-key-00002', '{"n":2}'::jsonb);
SELECT outcome, recovery_point, recovery_data FROM idem.acquire('t-up', 'upgrade-key-00003', '{"n":3}'::jsonb);
SELECT outcome, generation FROM idem.acquire('t-up', 'upgrade-key-00004', '{"n":44}'::jsonb);
SELECT outcome, generation FROM idem.acquire('t-up', 'upgrade-key-00005', '{"n":55}'::jsonb);

-- On to the newest version: the records of 0.1.0 still replay, and now leave an audit trail.
ALTER EXTENSION pg_idempotency UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT outcome, response_status, convert_from(response_body, 'UTF8') AS body
  FROM idem.acquire('t-up', 'upgrade-key-00001', '{"n":1}'::jsonb);
SELECT client_key, mutation_type, outcome, handler_called FROM idem.mutations ORDER BY mutation_id;
SELECT client_key, mutation_type, attempts_in_generation, attempted_at IS NOT NULL AS attempt_time FROM idem.keys ORDER BY client_key;

-- The outbox of 0.3.0 works in the updated database: a topic and a consumer (5 attempts by
-- default), an event emitted in a transaction (its commit row drawn at COMMIT, after its id),
-- claimed once, applied once, acked; nothing left to claim or in the backlog.
SELECT idem.create_topic('upgrade.orders') AS created;
SELECT idem.create_consumer('upgrade-sync', ARRAY['upgrade.orders']);
SELECT consumer, max_attempts FROM idem.outbox_consumers;
BEGIN;
SELECT idem.emit('t-up', 'upgrade.orders', '{"order":"o-1"}', key => 'o-1') AS up_event \gset
SELECT :up_event AS event_id, (SELECT count(*) FROM idem.outbox_commits) AS commit_rows_before_commit;
COMMIT;
SELECT e.event_id, e.txn_id, m.position, m.position > e.event_id AS drawn_at_commit
  FROM idem.outbox_events e JOIN idem.outbox_commits m USING (tenant_id, topic, txn_id);
CREATE TEMP TABLE up_claim AS SELECT * FROM idem.claim('upgrade-sync');
SELECT event_id, tenant_id, topic, key, payload, attempt, redelivered, token IS NOT NULL AS has_token FROM up_claim;
SELECT idem.consume_once('upgrade-sync', event_id, token) AS applied FROM up_claim;
SELECT idem.ack('upgrade-sync', array_agg(event_id), min(token::text)::uuid) AS acked FROM up_claim;
SELECT consumer, topic, backlog, claimed_groups, dead_letters FROM idem.outbox_lag;
SELECT count(*) AS claimed_again FROM idem.claim('upgrade-sync');
DROP TABLE up_claim;

-- The catalog of the updated install equals a fresh one's. CREATE EXTENSION runs the full install
-- script (built from sql/udfs and sql/schema), not this chain, so the two are independent paths:
-- every fact of one (regress/include/catalog.sql) must be a fact of the other.
\set ECHO none
\i regress/include/catalog.sql
\set ECHO all
SELECT string_agg(x, chr(30)) AS updated_catalog FROM idem_catalog \gset
\c idem_upgrade_fresh
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency;
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
\set ECHO none
\i regress/include/catalog.sql
\set ECHO all
CREATE TEMP TABLE updated_catalog AS SELECT unnest(string_to_array(:'updated_catalog', chr(30))) AS x;
(SELECT 'only after the updates' AS path, x FROM updated_catalog EXCEPT SELECT 'only after the updates', x FROM idem_catalog)
UNION ALL
(SELECT 'only in a fresh install', x FROM idem_catalog EXCEPT SELECT 'only in a fresh install', x FROM updated_catalog)
ORDER BY 1, 2;
-- What was compared, by kind of fact.
SELECT split_part(x, ' ', 1) AS fact, count(*) FROM idem_catalog GROUP BY 1 ORDER BY 1;
\c :regress_db
DROP DATABASE idem_upgrade_old;
DROP DATABASE idem_upgrade_fresh;
