-- The key store, single session: every acquire outcome (acquired, replay, mismatch, in_progress;
-- resumed is in lease.sql), the three acquire overloads, complete/release, the fencing of a
-- resolved or unknown record, handle and argument validation. Concurrency: regress/specs.
\set SHOW_CONTEXT never
\set k1 '''acquire-key-0001'''
\set k2 '''acquire-key-0002'''

--
-- acquired: the first attempt
--
CREATE TEMP TABLE first_acquire AS
  SELECT * FROM idem.acquire('t-acq', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'svc', resource => 'POST /payments');
-- attempt is the fencing token: the value just drawn from the global sequence idem.fencing_token_seq.
SELECT outcome, attempt = (SELECT last_value FROM idem.fencing_token_seq) AS token_from_seq,
       generation, recovery_point, recovery_data, response_status,
       response_headers, response_body, order_id, retry_after
  FROM first_acquire;
-- The holder's handle is "<tenant>:<hex of the scope digest>:<32 hex of the lease's secret>": the
-- record part is deterministic, the secret is this attempt's own (only its SHA-256 is stored).
SELECT handle AS h1, attempt AS a1 FROM first_acquire \gset
SELECT :'h1' ~ ('^' || 't-acq:' || encode(idem.scope_digest('t-acq', 'svc', 'POST /payments', :k1), 'hex') || ':[0-9a-f]{32}$')
       AS handle_format,
       (SELECT lease_secret_hash = sha256(convert_to(right(:'h1', 32), 'UTF8')) FROM idem.keys WHERE tenant_id = 't-acq')
       AS only_its_hash_stored;
-- The record: leased, not resolved, with the defaults of idem.lease_timeout and idem.default_ttl.
SELECT tenant_id, status, attempt = :a1 AS same_token, generation, hash_scheme,
       payload_hash = idem.payload_hash('{"currency":"EUR","amount":100}'::jsonb) AS hash_ok,
       caller_id, resource, client_key, lease_interval, ttl,
       lease_expires_at = created_at + lease_interval AS lease_from_created,
       recovery_point, response_status, resolved_at IS NULL AS unresolved, expires_at IS NULL AS no_expiry
  FROM idem.keys WHERE tenant_id = 't-acq';

--
-- in_progress: a committed, unexpired lease
--
SELECT outcome, attempt, generation, retry_after, record_of(handle) = record_of(:'h1') AS same_handle, response_status
  FROM idem.acquire('t-acq', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'svc', resource => 'POST /payments');
-- A different payload while the lease is live is also in_progress (the fingerprint is compared once
-- the key is resolved or its lease has expired): nothing executes either way.
SELECT outcome, attempt, retry_after
  FROM idem.acquire('t-acq', :k1, '{"amount":999}'::jsonb, caller => 'svc', resource => 'POST /payments');
-- The same client key under another caller or resource of the tenant is refused (0.3.6, the key
-- scope tenant): key_reused names what differs; nothing executes, no record is made.
SELECT outcome, attempt, handle IS NOT NULL AS has_handle, key_reuse_differs FROM idem.acquire('t-acq', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'other', resource => 'POST /payments');
SELECT outcome, attempt, key_reuse_differs FROM idem.acquire('t-acq', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'other', resource => 'POST /refunds');
SELECT count(*) AS records FROM idem.keys WHERE client_key = :k1;
-- Under the key scope route it is another record, with a token of its own (tokens are global: no
-- two records share one); so is the key under another tenant.
SET idem.key_scope = route;
SELECT outcome, attempt > :a1 AS new_token, generation FROM idem.acquire('t-acq', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'other', resource => 'POST /payments');
SELECT outcome, attempt > :a1 AS new_token, generation FROM idem.acquire('t-acq', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'svc', resource => 'POST /refunds');
RESET idem.key_scope;
SELECT outcome, attempt > :a1 AS new_token, generation FROM idem.acquire('t-acq-2', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'svc', resource => 'POST /payments');
SELECT tenant_id, caller_id, resource, status, key_scope, attempt = :a1 AS token_a1 FROM idem.keys WHERE client_key = :k1 ORDER BY tenant_id, caller_id, resource;
SELECT count(*) AS records, count(DISTINCT attempt) AS distinct_tokens FROM idem.keys WHERE client_key = :k1;

--
-- complete, then replay: status, headers and body byte for byte (the body holds a zero byte)
--
SELECT idem.complete(:'h1', :a1, 201, '{"Content-Type":"application/json","Location":"/payments/p_1","X-Amount":"100"}',
                     '\x7b226964223a22705f31227d00ff0a'::bytea, order_id => 'order-1',
                     handler_response => '{"charge_id":"ch_1","status":"succeeded"}');
SELECT status, attempt = :a1 AS same_token, response_status, response_headers, response_body, order_id, handler_response,
       lease_expires_at IS NULL AS lease_cleared, expires_at = resolved_at + ttl AS expires_after_ttl
  FROM idem.keys WHERE tenant_id = 't-acq' AND caller_id = 'svc' AND resource = 'POST /payments';
SELECT outcome, attempt, generation, response_status, response_headers, response_body,
       response_body = '\x7b226964223a22705f31227d00ff0a'::bytea AS body_exact, octet_length(response_body) AS body_bytes,
       order_id, recovery_point, retry_after, record_of(handle) = record_of(:'h1') AS same_handle
  FROM idem.acquire('t-acq', :k1, '{"amount":100,"currency":"EUR"}'::jsonb, caller => 'svc', resource => 'POST /payments');
-- Another spelling of the same document replays too: key order, whitespace, number spelling.
SELECT outcome, response_status FROM idem.acquire('t-acq', :k1, '{ "currency" : "EUR", "amount" : 1E2 }'::jsonb, caller => 'svc', resource => 'POST /payments');
SELECT outcome, response_status FROM idem.acquire('t-acq', :k1, '{ "currency" : "EUR", "amount" : 100.0 }'::text, caller => 'svc', resource => 'POST /payments');
SELECT outcome, response_status FROM idem.acquire('t-acq', :k1, idem.payload_hash('{"amount":100,"currency":"EUR"}'::jsonb), caller => 'svc', resource => 'POST /payments');
-- A resolved record never changes while it is replayed.
SELECT status, attempt = :a1 AS same_token, generation FROM idem.keys WHERE tenant_id = 't-acq' AND caller_id = 'svc' AND resource = 'POST /payments';

--
-- mismatch: the key reused with another payload; nothing executes and nothing changes
--
SELECT outcome, attempt, generation, response_status, response_body, order_id
  FROM idem.acquire('t-acq', :k1, '{"amount":101,"currency":"EUR"}'::jsonb, caller => 'svc', resource => 'POST /payments');
SELECT outcome FROM idem.acquire('t-acq', :k1, '{"amount":100}'::text, caller => 'svc', resource => 'POST /payments');
SELECT outcome FROM idem.acquire('t-acq', :k1, sha256('other'::bytea), caller => 'svc', resource => 'POST /payments');
SELECT status, attempt = :a1 AS same_token, generation, payload_hash = idem.payload_hash('{"amount":100,"currency":"EUR"}'::jsonb) AS hash_kept
  FROM idem.keys WHERE tenant_id = 't-acq' AND caller_id = 'svc' AND resource = 'POST /payments';

--
-- ERR_LEASE_LOST (IK005) on a resolved record: the holder may record its result only once
--
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h1', :a1), jsonb_build_object('a1', :a1));
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'h1', :a1, 'charge_created'), jsonb_build_object('a1', :a1));
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'h1', :a1), jsonb_build_object('a1', :a1));
SELECT error_hint(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h1', :a1));
-- An unknown (never acquired, or purged) record, whatever the token.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', 't-acq:' || repeat('ab', 32), :a1));
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', 't-acq:' || repeat('ab', 32), :a1, 'step'));
SELECT expect_error(format('SELECT idem.release(%L, %s)', 'nobody:' || repeat('0', 64), :a1));

--
-- ERR_ARGUMENT_INVALID (IK012): malformed handles and a NULL attempt
--
SELECT h AS handle, expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', h, :a1)) AS error
  FROM unnest(ARRAY[NULL, '', 'x', 't-acq', repeat('a', 64), ':' || repeat('a', 63),
                    't-acq:' || repeat('A', 64), 't-acq:' || repeat('g', 64), 't-acq;' || repeat('a', 64),
                    't-acq:' || repeat('a', 65)]) AS h;
SELECT expect_error(format('SELECT idem.release(NULL, %s)', :a1));
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', 'x', :a1, 'step'));
SELECT expect_error(format('SELECT idem.complete(%L, NULL, 200, NULL, NULL)', :'h1'));
SELECT expect_error(format('SELECT idem.release(%L, NULL)', :'h1'));
SELECT expect_error(format('SELECT idem.checkpoint(%L, NULL, %L)', :'h1', 'step'));
SELECT error_hint(format('SELECT idem.release(%L, %s)', 'x', :a1));
-- The tenant is everything before the digest (and the holder's secret), so tenants may contain ':'.
SELECT outcome AS oc, handle AS hc, attempt AS ac FROM idem.acquire('a:b', :k1, '{}'::jsonb) \gset
SELECT :'oc' AS outcome, record_of(:'hc') = 'a:b:' || encode(idem.scope_digest('a:b', '', '', :k1), 'hex') AS colon_tenant,
       idem._handle_tenant(:'hc') AS tenant;
SELECT idem.release(:'hc', :ac);
SELECT tenant_id, status, attempt = :ac AS same_token FROM idem.keys WHERE tenant_id = 'a:b';

--
-- complete: argument validation (nothing recorded), and NULL headers/body stored as {} and ''
--
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-acq', :k2, '{"n":2}'::jsonb) \gset
SELECT s AS status, expect_error(format('SELECT idem.complete(%L, %s, %s, NULL, NULL)', :'h2', :a2, coalesce(s::text, 'NULL'))) AS error
  FROM unnest(ARRAY[99, 600, NULL, 0, -200]) AS s;
SELECT hd AS headers, expect_error(format('SELECT idem.complete(%L, %s, 200, %L::jsonb, NULL)', :'h2', :a2, hd)) AS error
  FROM unnest(ARRAY['[]', '"Content-Type: text/plain"', '1', 'null']) AS hd;
SELECT status, attempt = :a2 AS same_token, response_status FROM idem.keys WHERE tenant_id = 't-acq' AND client_key = :k2;
-- Boundaries of the status range are accepted.
SELECT idem.complete(:'h2', :a2, 100, NULL, NULL);
SELECT outcome, response_status, response_headers, response_body, octet_length(response_body) AS body_bytes, order_id
  FROM idem.acquire('t-acq', :k2, '{"n":2}'::jsonb);
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-acq', 'acquire-key-0003', '{}'::jsonb) \gset
SELECT idem.complete(:'h3', :a3, 599, '{}', ''::bytea);
SELECT outcome, response_status, response_headers, response_body FROM idem.acquire('t-acq', 'acquire-key-0003', '{}'::jsonb);

--
-- release: the key is free again; the next acquire is a fresh attempt (a new, higher fencing
-- token, same generation), and may carry a new payload when the holder said the handler was not
-- called (released_payload_pinned.sql: otherwise the payload is pinned)
--
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-acq', 'acquire-key-0004', '{"try":1}'::jsonb) \gset
-- Tokens rise: this one is higher than the one issued before it (:a3, another key).
SELECT :a4 > :a3 AS later_than_a3;
SELECT idem.release(:'h4', :a4, 'card declined by our own checks', handler_called => false);
SELECT status, attempt = :a4 AS same_token, generation, last_error, lease_expires_at IS NULL AS lease_cleared,
       expires_at IS NOT NULL AS has_expiry, response_status
  FROM idem.keys WHERE tenant_id = 't-acq' AND client_key = 'acquire-key-0004';
-- The released holder is fenced out.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h4', :a4), jsonb_build_object('a4', :a4));
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'h4', :a4), jsonb_build_object('a4', :a4));
SELECT outcome AS o4b, attempt AS a4b, handle AS h_a4b, generation AS g4b, record_of(handle) = record_of(:'h4') AS same_handle4b
  FROM idem.acquire('t-acq', 'acquire-key-0004', '{"try":2}'::jsonb) \gset
SELECT :'o4b' AS outcome, :a4b > :a4 AS new_token, :g4b AS generation, :'same_handle4b'::boolean AS same_handle;
SELECT status, attempt = :a4b AS same_token, generation, last_error, expires_at IS NULL AS no_expiry,
       payload_hash = idem.payload_hash('{"try":2}'::jsonb) AS new_payload
  FROM idem.keys WHERE tenant_id = 't-acq' AND client_key = 'acquire-key-0004';
-- The released holder's token stays fenced out of the fresh attempt.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h4', :a4), jsonb_build_object('a4', :a4, 'a4b', :a4b));
SELECT idem.complete(:'h_a4b', :a4b, 200, '{}', 'ok');
SELECT outcome, attempt, response_body FROM idem.acquire('t-acq', 'acquire-key-0004', '{"try":2}'::jsonb);
SELECT outcome FROM idem.acquire('t-acq', 'acquire-key-0004', '{"try":1}'::jsonb);

--
-- The three overloads
--
-- An untyped literal resolves to the text overload, which parses strictly: duplicates refused,
-- whereas the jsonb overload silently keeps the last duplicate.
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0005', '{"amount":1,"amount":2}')$$);
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0005', '{"amount":1,"amount":2}'::text)$$);
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0005', '[1,]'::text)$$);
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0005', '9007199254740993'::text)$$);
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0005', '{"amount":9007199254740993}'::jsonb)$$);
SELECT count(*) AS nothing_recorded FROM idem.keys WHERE client_key = 'acquire-key-0005';
SELECT outcome, attempt > :a4b AS new_token FROM idem.acquire('t-acq', 'acquire-key-0005', '{"amount":1,"amount":2}'::jsonb);
SELECT payload_hash = idem.payload_hash('{"amount":2}'::text) AS jsonb_kept_last
  FROM idem.keys WHERE client_key = 'acquire-key-0005';
-- bytea: a precomputed fingerprint, exactly 32 bytes.
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0006', '\x0102'::bytea)$$);
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0006', ''::bytea)$$);
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0006', sha256('x'::bytea) || '\x00'::bytea)$$);
SELECT expect_error($$SELECT idem.acquire('t-acq', 'acquire-key-0006', NULL::bytea)$$);
SELECT error_hint($$SELECT idem.acquire('t-acq', 'acquire-key-0006', '\x0102'::bytea)$$);
-- The hash overload is the jsonb overload for the same document: acquire with the hash,
-- complete, then the jsonb and text overloads replay it.
SELECT handle AS h6, attempt AS a6
  FROM idem.acquire('t-acq', 'acquire-key-0006', idem.payload_hash('{"sku":"A-1","qty":2}'::jsonb)) \gset
SELECT idem.complete(:'h6', :a6, 201, '{"Location":"/orders/o_6"}', 'created', 'o_6');
SELECT outcome, response_status, response_body, order_id FROM idem.acquire('t-acq', 'acquire-key-0006', '{"qty":2,"sku":"A-1"}'::jsonb);
SELECT outcome, response_status, response_body, order_id FROM idem.acquire('t-acq', 'acquire-key-0006', '{"qty":2.0,"sku":"A-1"}'::text);
SELECT outcome FROM idem.acquire('t-acq', 'acquire-key-0006', '{"qty":3,"sku":"A-1"}'::jsonb);
SELECT hash_scheme = idem.fingerprint_scheme() AS scheme_stored FROM idem.keys WHERE client_key = 'acquire-key-0006';

--
-- acquire: invalid arguments raise, and record nothing
--
SELECT label, expect_error(sql) AS error FROM (VALUES
  ('NULL jsonb payload', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', NULL::jsonb)$$),
  ('NULL text payload', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', NULL::text)$$),
  ('NULL key', $$SELECT idem.acquire('t-acq', NULL, '{}'::jsonb)$$),
  ('empty key', $$SELECT idem.acquire('t-acq', '', '{}'::jsonb)$$),
  ('short key', $$SELECT idem.acquire('t-acq', 'short', '{}'::jsonb)$$),
  ('non-ASCII key', $$SELECT idem.acquire('t-acq', 'acquire-key-000é', '{}'::jsonb)$$),
  ('NULL tenant', $$SELECT idem.acquire(NULL, 'acquire-key-0007', '{}'::jsonb)$$),
  ('empty tenant', $$SELECT idem.acquire('', 'acquire-key-0007', '{}'::jsonb)$$),
  ('NULL caller', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, caller => NULL)$$),
  ('NULL resource', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, resource => NULL)$$),
  ('on_busy bogus', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, on_busy => 'bogus')$$),
  ('on_busy NULL', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, on_busy => NULL)$$),
  ('on_busy case', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, on_busy => 'WAIT')$$),
  ('negative lease', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, lease => '-1 second')$$),
  ('zero lease', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, lease => '0')$$),
  ('zero ttl', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, ttl => '0')$$),
  ('negative ttl', $$SELECT idem.acquire('t-acq', 'acquire-key-0007', '{}'::jsonb, ttl => '-1 day')$$)
) AS t(label, sql);
SELECT count(*) AS nothing_recorded FROM idem.keys WHERE client_key = 'acquire-key-0007';
SELECT error_hint($$SELECT idem.acquire('t-acq', 'acquire-key-0007', NULL::jsonb)$$);

--
-- Single-transaction use: acquire, business write and complete commit together; a rollback
-- (an unhandled error) records nothing and the key starts afresh.
--
CREATE TABLE payments (id text PRIMARY KEY, amount integer);
BEGIN;
SELECT handle AS h8, attempt AS a8 FROM idem.acquire('t-acq', 'acquire-key-0008', '{"amount":5}'::jsonb) \gset
-- Within the transaction that holds it, the key is in progress.
SELECT outcome FROM idem.acquire('t-acq', 'acquire-key-0008', '{"amount":5}'::jsonb);
INSERT INTO payments VALUES ('p_8', 5);
SELECT idem.complete(:'h8', :a8, 201, '{}', 'p_8', 'p_8');
COMMIT;
SELECT outcome, response_body, order_id FROM idem.acquire('t-acq', 'acquire-key-0008', '{"amount":5}'::jsonb);
BEGIN;
SELECT outcome AS o9r, attempt AS a9r, handle AS h_a9r FROM idem.acquire('t-acq', 'acquire-key-0009', '{"amount":9}'::jsonb) \gset
SELECT :'o9r' AS outcome;
INSERT INTO payments VALUES ('p_9', 9);
ROLLBACK;
SELECT count(*) AS nothing_recorded FROM idem.keys WHERE client_key = 'acquire-key-0009';
-- The key starts afresh, and the rolled-back attempt's token is not issued again (a sequence
-- does not roll back).
SELECT handle AS h9, outcome AS o9, attempt AS a9, generation AS g9 FROM idem.acquire('t-acq', 'acquire-key-0009', '{"amount":9}'::jsonb) \gset
SELECT :'o9' AS outcome, :a9 > :a9r AS new_token, :g9 AS generation;
-- A complete that is rolled back leaves the lease with its holder.
BEGIN;
SELECT idem.complete(:'h9', :a9, 200, '{}', 'x');
ROLLBACK;
SELECT status, attempt = :a9 AS same_token, response_status FROM idem.keys WHERE client_key = 'acquire-key-0009';
DROP TABLE payments;

--
-- Stored responses kept out of line (TOAST): an incompressible 3 MB body, a compressible 1 MB one
-- with 2,000 headers, an inline one, an empty one, and NUL bytes with escaped headers replay
-- byte for byte however the replay is read (review of 0.3.3's primary-key read, which hands the
-- caller the stored row): in a later statement, in the transaction that completed it, in the
-- statement that completed it, from a procedure after its own COMMIT, through a cursor fetched
-- later, and after VACUUM FREEZE.
--
CREATE TABLE bodies (name text PRIMARY KEY, body bytea, headers jsonb);
INSERT INTO bodies
  SELECT 'random3m', string_agg(decode(md5('acquire-toast-' || g), 'hex'), ''), '{}' FROM generate_series(1, 196608) g
  UNION ALL SELECT 'repeat1m', convert_to(repeat('abcdefgh', 131072), 'UTF8'),
                   (SELECT jsonb_object_agg('h' || g, repeat('v', 50)) FROM generate_series(1, 2000) g)
  UNION ALL SELECT 'inline2k', (SELECT string_agg(decode(md5(g::text), 'hex'), '') FROM generate_series(1, 125) g), '{"a":"b"}'
  UNION ALL SELECT 'empty', '', '{}'
  UNION ALL SELECT 'nul_bytes', decode(repeat('00ff', 5000), 'hex'), '{"ü":"é","\\u0001":"\\ud83d\\ude00"}';
SELECT name, octet_length(body) AS bytes FROM bodies ORDER BY name;
SELECT count(idem.complete(a.handle, a.attempt, 201, b.headers, b.body, 'ord-' || b.name)) AS completed
  FROM bodies b, LATERAL idem.acquire('t-acq', 'toast-body-key-' || b.name, '{"a":1}'::jsonb) a;
CREATE VIEW replayed AS
  SELECT b.name, a.outcome, a.response_status, a.response_body = b.body AS same_body,
         a.response_headers = b.headers AS same_headers, a.order_id
    FROM bodies b, LATERAL idem.acquire('t-acq', 'toast-body-key-' || b.name, '{"a":1}'::jsonb) a;
SELECT * FROM replayed ORDER BY name;
BEGIN;
SELECT handle AS ht, attempt AS at FROM idem.acquire('t-acq', 'toast-body-key-same-transaction', '{"a":1}'::jsonb) \gset
SELECT idem.complete(:'ht', :at, 200, (SELECT headers FROM bodies WHERE name = 'repeat1m'),
                     (SELECT body FROM bodies WHERE name = 'random3m')) IS NOT NULL AS completed;
SELECT outcome, response_body = (SELECT body FROM bodies WHERE name = 'random3m') AS same_body,
       response_headers = (SELECT headers FROM bodies WHERE name = 'repeat1m') AS same_headers
  FROM idem.acquire('t-acq', 'toast-body-key-same-transaction', '{"a":1}'::jsonb);
COMMIT;
SELECT handle AS ht, attempt AS at FROM idem.acquire('t-acq', 'toast-body-key-same-statement', '{"a":1}'::jsonb) \gset
WITH c AS MATERIALIZED (
  SELECT idem.complete(:'ht', :at, 202, '{}', (SELECT body FROM bodies WHERE name = 'random3m')) AS done)
SELECT a.outcome, a.response_status, a.response_body = (SELECT body FROM bodies WHERE name = 'random3m') AS same_body
  FROM c, LATERAL idem.acquire('t-acq', 'toast-body-key-same-statement', '{"a":1}'::jsonb) a;
CREATE PROCEDURE replay_after_commit() LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  COMMIT;
  SELECT * INTO r FROM idem.acquire('t-acq', 'toast-body-key-random3m', '{"a":1}'::jsonb);
  RAISE NOTICE 'after COMMIT: % %', r.outcome, r.response_body = (SELECT body FROM bodies WHERE name = 'random3m');
  COMMIT;
  SELECT * INTO r FROM idem.acquire('t-acq', 'toast-body-key-repeat1m', '{"a":1}'::jsonb);
  RAISE NOTICE 'after another: % %', r.outcome, r.response_headers = (SELECT headers FROM bodies WHERE name = 'repeat1m');
END $$;
CALL replay_after_commit();
BEGIN;
DECLARE replays CURSOR FOR SELECT name, outcome, same_body, same_headers FROM replayed ORDER BY name;
FETCH 2 FROM replays;
SELECT count(*) AS unrelated_work FROM generate_series(1, 1000);
FETCH ALL FROM replays;
COMMIT;
VACUUM (FREEZE) idem.keys;
SELECT name, outcome, same_body, same_headers FROM replayed ORDER BY name;
DROP PROCEDURE replay_after_commit();
DROP VIEW replayed;
DROP TABLE bodies;
DELETE FROM idem.keys WHERE client_key LIKE 'toast-body-key-%';
