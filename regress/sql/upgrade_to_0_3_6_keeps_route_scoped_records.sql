-- 0.3.5 -> 0.3.6: a key belongs to its tenant from now on, but records made before the update
-- were made under the route scope and may share a client key across routes: they keep
-- key_scope NULL, own nothing, and go on as before; new records own their key.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_upgrade_036;
\c idem_upgrade_036
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '0.3.5';
RESET client_min_messages;
-- One key on two routes, each a record of its own (0.3.5's scope).
SELECT outcome FROM idem.acquire('acme', 'shared-upgrade-0001', '{"n":1}'::jsonb, caller => 'web', resource => 'POST /a');
SELECT outcome FROM idem.acquire('acme', 'shared-upgrade-0001', '{"n":1}'::jsonb, caller => 'web', resource => 'POST /b');
ALTER EXTENSION pg_idempotency UPDATE TO '0.3.6';
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT resource, key_scope FROM idem.keys ORDER BY resource;
-- The old records own nothing: a third route is another record still, now owning the key.
SELECT outcome FROM idem.acquire('acme', 'shared-upgrade-0001', '{"n":1}'::jsonb, caller => 'web', resource => 'POST /c');
SELECT outcome, key_reuse_differs FROM idem.acquire('acme', 'shared-upgrade-0001', '{"n":1}'::jsonb, caller => 'web', resource => 'POST /d');
-- The old records answer their own retries as before.
SELECT outcome FROM idem.acquire('acme', 'shared-upgrade-0001', '{"n":1}'::jsonb, caller => 'web', resource => 'POST /a');
SELECT resource, key_scope FROM idem.keys ORDER BY resource;
SELECT outcome, resource FROM idem.mutations WHERE outcome = 'key_reused';
\c :regress_db
DROP DATABASE idem_upgrade_036;
