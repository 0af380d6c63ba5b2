-- double_charges_by_resource: one checkout charged under two keys (which double_charges, per key
-- and generation, never compares) is found; a retry under one key that replayed, and a second key
-- whose handler verified the same charge, are not.
\set SHOW_CONTEXT never
CREATE TEMP TABLE calls (key text, resource text, charge text, order_id text);
INSERT INTO calls VALUES
  ('dcr-key-quoted-0001', '/checkout/cs_twice/complete', 'ch_twice_1', 'ord_twice_1'),  -- "k" and k: two keys
  ('dcr-key-bare-00001', '/checkout/cs_twice/complete', 'ch_twice_2', 'ord_twice_2'),
  ('dcr-key-once-00001', '/checkout/cs_once/complete', 'ch_once', 'ord_once'),
  ('dcr-key-first-0001', '/checkout/cs_verified/complete', 'ch_verified', 'ord_verified'),  -- a second key whose
  ('dcr-key-second-001', '/checkout/cs_verified/complete', 'ch_verified', 'ord_verified');  -- handler found the charge
SELECT count(*) AS completed FROM (
  SELECT idem.complete(a.handle, a.attempt, 201, '{}'::jsonb, 'ok'::bytea, c.order_id,
                       jsonb_build_object('charge_id', c.charge))
    FROM calls c, LATERAL idem.acquire('t-dcr', c.key, '{"amount_cents":1999}'::jsonb, caller => 'web', resource => c.resource) a) x;
-- A retry under the once-key: a replay, no execution.
SELECT outcome FROM idem.acquire('t-dcr', 'dcr-key-once-00001', '{"amount_cents":1999}'::jsonb, caller => 'web',
                                 resource => '/checkout/cs_once/complete');
SELECT count(*) AS per_key_rows FROM idem.double_charges() WHERE tenant_id = 't-dcr';
SELECT resource, client_keys, executions, order_ids, charge_ids, cardinality(processor_keys) AS processor_keys
  FROM idem.double_charges_by_resource() WHERE tenant_id = 't-dcr';
-- A third key for the twice-charged checkout that executed without recording a charge: still
-- listed, now with three executions.
SELECT a.handle AS h, a.attempt AS a FROM idem.acquire('t-dcr', 'dcr-key-third-0001', '{"amount_cents":1999}'::jsonb,
  caller => 'web', resource => '/checkout/cs_twice/complete') a \gset
SELECT idem.complete(:'h', :a, 201, '{}'::jsonb, 'ok'::bytea, NULL, NULL);
SELECT resource, executions, charge_ids FROM idem.double_charges_by_resource() WHERE tenant_id = 't-dcr';
-- Two keys for another checkout, both executed, neither recorded a charge: it may have charged
-- twice, so it is listed (the same order id on both changes nothing).
SELECT count(*) AS completed FROM (
  SELECT idem.complete(a.handle, a.attempt, 201, '{}'::jsonb, 'ok'::bytea, 'ord_unknown')
    FROM unnest(ARRAY['dcr-key-unknown-01', 'dcr-key-unknown-02']) k,
         LATERAL idem.acquire('t-dcr', k, '{"amount_cents":1999}'::jsonb, caller => 'web', resource => '/checkout/cs_unknown/complete') a) x;
SELECT resource, executions, order_ids, charge_ids FROM idem.double_charges_by_resource() WHERE tenant_id = 't-dcr' ORDER BY resource;
-- Keys acquired without a resource name no business object: never grouped together.
SELECT count(*) AS completed FROM (
  SELECT idem.complete(a.handle, a.attempt, 201, '{}'::jsonb, 'ok'::bytea, 'ord_' || k, jsonb_build_object('charge_id', 'ch_' || k))
    FROM unnest(ARRAY['dcr-key-nores-0001', 'dcr-key-nores-0002']) k,
         LATERAL idem.acquire('t-dcr', k, '{"amount_cents":1999}'::jsonb) a) x;
SELECT count(*) AS without_resource_listed FROM idem.double_charges_by_resource() WHERE tenant_id = 't-dcr' AND resource IS NULL;
-- Outside the window: nothing.
SELECT count(*) AS since_tomorrow FROM idem.double_charges_by_resource(now() + interval '1 day') WHERE tenant_id = 't-dcr';
