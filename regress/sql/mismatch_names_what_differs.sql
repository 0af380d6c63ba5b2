-- A reused key with another payload: the mismatch names the JSON pointers that differ (in
-- key_reuse_differs), from salted digests of the members kept with the record, never a value.
\set SHOW_CONTEXT never
CREATE FUNCTION mn_done(p_key text, p_payload jsonb, p_ttl interval DEFAULT NULL) RETURNS void LANGUAGE sql AS $$
  SELECT idem.complete(a.handle, a.attempt, 201, '{}'::jsonb, 'ok'::bytea)
    FROM idem.acquire('t-mn', p_key, p_payload, caller => 'web', resource => 'POST /checkout', ttl => p_ttl) a $$;
SELECT mn_done('mn-key-00000000001', '{"amount_cents":1999,"currency":"usd","items":[{"sku":"a","qty":1},{"sku":"b","qty":1}]}');
-- The fast path, then the general one: the same pointers.
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000001',
  '{"amount_cents":2999,"currency":"usd","items":[{"sku":"a","qty":1},{"sku":"b","qty":2}]}'::jsonb, caller => 'web', resource => 'POST /checkout');
SET idem.fast_path = off;
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000001',
  '{"amount_cents":2999,"currency":"usd","items":[{"sku":"a","qty":1},{"sku":"b","qty":2}]}'::jsonb, caller => 'web', resource => 'POST /checkout');
RESET idem.fast_path;
-- As JSON text; members added and removed; member order and number spelling do not count.
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000001',
  '{"items":[{"qty":1,"sku":"a"},{"qty":1.0,"sku":"b"}],"currency":"eur","coupon":"X"}'::text, caller => 'web', resource => 'POST /checkout');
-- The same payload again: a replay, nothing named.
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000001',
  '{"currency":"usd","amount_cents":1999,"items":[{"sku":"a","qty":1},{"sku":"b","qty":1}]}'::jsonb, caller => 'web', resource => 'POST /checkout');
-- What is kept: member names and 4-byte digests, no value.
SELECT length(payload_members) AS bytes, position('1999' IN encode(payload_members, 'escape')) AS amount_kept,
       position('usd' IN encode(payload_members, 'escape')) AS currency_kept,
       position('amount_cents' IN encode(payload_members, 'escape')) > 0 AS name_kept
  FROM idem.keys WHERE tenant_id = 't-mn';
-- Another record, the same payload: other digests (salted per record).
SELECT mn_done('mn-key-00000000002', '{"amount_cents":1999,"currency":"usd","items":[{"sku":"a","qty":1},{"sku":"b","qty":1}]}');
SELECT count(DISTINCT payload_members) AS distinct_digest_sets, count(DISTINCT payload_hash) AS distinct_fingerprints
  FROM idem.keys WHERE tenant_id = 't-mn';
-- Opted out for a transaction: nothing kept for the new key, and its mismatch names nothing.
BEGIN;
SET LOCAL idem.payload_members = off;
SELECT mn_done('mn-key-00000000003', '{"amount_cents":1}');
COMMIT;
SELECT payload_members IS NULL AS none_kept FROM idem.keys WHERE tenant_id = 't-mn' AND client_key = 'mn-key-00000000003';
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000003', '{"amount_cents":2}'::jsonb, caller => 'web', resource => 'POST /checkout');
-- The fingerprint form names what its caller's digests say (the client computes them); none sent: none named.
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000001', idem.payload_hash('{"amount_cents":5}'::jsonb),
  caller => 'web', resource => 'POST /checkout');
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000001', idem.payload_hash('{"amount_cents":5}'::jsonb),
  caller => 'web', resource => 'POST /checkout', payload_members => '\x010200'::bytea);
-- Anything else the fingerprint form is handed is refused, and nothing is written.
SELECT outcome FROM idem.acquire('t-mn', 'mn-key-00000000001', idem.payload_hash('{"amount_cents":5}'::jsonb),
  caller => 'web', resource => 'POST /checkout', payload_members => '\xdeadbeef'::bytea);
SELECT outcome FROM idem.acquire('t-mn', 'mn-key-00000000005', idem.payload_hash('{}'::jsonb),
  payload_members => '\x010100052f61'::bytea);
SELECT outcome FROM idem.acquire('t-mn', 'mn-key-00000000005', idem.payload_hash('{}'::jsonb),
  payload_members => '\x0101'::bytea || decode(repeat('00012f' || repeat('00', 8), 1000), 'hex'));
-- Names a caller's digests may not carry: not UTF-8 (acquire returns them as text), or twice.
SELECT outcome FROM idem.acquire('t-mn', 'mn-key-00000000005', idem.payload_hash('{"x":1}'::jsonb),
  payload_members => '\x01010301ff00000000'::bytea);
SELECT outcome FROM idem.acquire('t-mn', 'mn-key-00000000005', idem.payload_hash('{"x":1}'::jsonb),
  payload_members => '\x01010501780000000001780000000000'::bytea);
SELECT count(*) AS written FROM idem.keys WHERE client_key = 'mn-key-00000000005';
-- An object that became an array: the root ("") is named, though "/0" reads the same in both.
SELECT mn_done('mn-key-00000000006', '{"0":1}');
SELECT outcome, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000006', '[1]'::jsonb, caller => 'web', resource => 'POST /checkout');
-- The digests follow from what the row holds, so only the owner reads them: an auditor reads
-- every other column of idem.keys.
CREATE ROLE mn_auditor IN ROLE idem_auditor;
SET ROLE mn_auditor;
SELECT payload_members FROM idem.keys LIMIT 1;
SELECT * FROM idem.keys LIMIT 1;
SELECT count(client_key) >= 0 AS other_columns_readable FROM idem.keys;
RESET ROLE;
DROP ROLE mn_auditor;
-- A key used again past its TTL keeps the new generation's members.
SELECT mn_done('mn-key-00000000004', '{"amount_cents":100,"note":"a"}', '100 milliseconds');
SELECT pg_sleep(0.2);
SELECT mn_done('mn-key-00000000004', '{"amount_cents":100,"note":"b"}');
SELECT generation, key_reuse_differs FROM idem.acquire('t-mn', 'mn-key-00000000004', '{"amount_cents":200,"note":"b"}'::jsonb,
  caller => 'web', resource => 'POST /checkout');
-- The comparison itself: two encodings, or anything else.
SELECT idem._payload_differs('\x0103'::bytea, '\x0103'::bytea) AS nothing_differs, idem._payload_differs('\x02'::bytea, '\x0103'::bytea) AS not_an_encoding;
DROP FUNCTION mn_done(text, jsonb, interval);
