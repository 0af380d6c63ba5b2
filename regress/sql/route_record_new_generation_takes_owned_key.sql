-- Review of 0.3.6 (76bac32): the owner check (idem._key_owner_differs) runs only before an
-- insert. A record that owns nothing (made before 0.3.6, key_scope NULL, or under the key scope
-- route) starts a new generation under the default key scope tenant without it, while another
-- record of the tenant owns the key: the same key executes on two routes at once, both
-- in_progress, under the default scope (key_reuse then lists the fork).
-- Expected: the new generation on the route that does not own the key is refused (key_reused,
-- naming the resource); no second execution, the record keeps its first generation.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_route_record_new_generation;
\c idem_route_record_new_generation
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '0.3.5';
RESET client_min_messages;
-- 0.3.5: the key completed on checkout S_a, with a short TTL.
SELECT handle AS h1, attempt AS a1 FROM idem.acquire('acme', 'shared-key-0000001', '{"cart":"a"}'::jsonb, caller => 'web',
       resource => 'POST /checkout/S_a/complete', ttl => '200 milliseconds') \gset
SELECT idem.complete(:'h1', :a1, 201, '{}', 'a', 'ord-a-1', '{"charge_id":"ch_a1"}');
ALTER EXTENSION pg_idempotency UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
-- 0.3.6, the default scope: S_b's record owns the key (the 0.3.5 record owns nothing).
SELECT outcome FROM idem.acquire('acme', 'shared-key-0000001', '{"cart":"b"}'::jsonb, caller => 'web',
       resource => 'POST /checkout/S_b/complete');
SELECT pg_sleep(0.3);
-- The same key on S_a once its record is history: S_b owns the key.
SELECT outcome, key_reuse_differs FROM idem.acquire('acme', 'shared-key-0000001', '{"cart":"a2"}'::jsonb, caller => 'web',
       resource => 'POST /checkout/S_a/complete');
SELECT resource, key_scope, status, generation FROM idem.keys ORDER BY resource;
-- The same within 0.3.6: a record made under the key scope route.
SET idem.key_scope = route;
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('acme', 'shared-key-0000003', '{"cart":"x"}'::jsonb, caller => 'web',
       resource => 'POST /checkout/S_x/complete', ttl => '200 milliseconds') \gset
SELECT idem.complete(:'h3', :a3, 201, '{}', 'x', 'ord-x-1', '{"charge_id":"ch_x1"}');
RESET idem.key_scope;
SELECT outcome FROM idem.acquire('acme', 'shared-key-0000003', '{"cart":"y"}'::jsonb, caller => 'web',
       resource => 'POST /checkout/S_y/complete');
SELECT pg_sleep(0.3);
SELECT outcome, key_reuse_differs FROM idem.acquire('acme', 'shared-key-0000003', '{"cart":"x2"}'::jsonb, caller => 'web',
       resource => 'POST /checkout/S_x/complete');
SELECT resource, key_scope, status, generation FROM idem.keys WHERE client_key = 'shared-key-0000003' ORDER BY resource;
\c :regress_db
DROP DATABASE idem_route_record_new_generation;
