-- The demo's script: one checkout, retried, raced, reused with another body, and crashed; an order
-- guarded by the order state machine; and the audit trail an operator reads.
\pset footer off
\set SHOW_CONTEXT never
\pset null '-'
CREATE EXTENSION pg_idempotency;
CREATE TABLE orders (tenant_id text, order_id text, amount_cents int, PRIMARY KEY (tenant_id, order_id));

\echo
\echo '1. Fingerprints: the same payload, spelled differently, has one fingerprint (RFC 8785 + SHA-256)'
SELECT idem.canonical_json('{"currency":"EUR", "amount_cents":1999.0, "meta":{"trace_id":"t-1"}}') AS canonical,
       encode(idem.payload_hash('{"currency":"EUR","amount_cents":1999,"meta":{"trace_id":"t-1"}}', '{/meta/trace_id}'), 'hex') AS hash_without_trace,
       idem.payload_hash('{"amount_cents":1999,"currency":"EUR","meta":{"trace_id":"t-2"}}', '{/meta/trace_id}')
         = idem.payload_hash('{"currency":"EUR","amount_cents":1999,"meta":{"trace_id":"t-1"}}', '{/meta/trace_id}') AS same_after_exclusion;

\echo '   A number a double cannot hold exactly is refused rather than silently merged with its neighbour:'
\set ON_ERROR_STOP off
SELECT idem.payload_hash('{"amount_cents": 9007199254740993}');
\set ON_ERROR_STOP on

\echo
\echo '2. Scoped keys: the same Idempotency-Key from two tenants names two different records'
SELECT tenant, encode(idem.scope_digest(tenant, 'checkout', 'cart_42', 'c0ffee00-1111-4222-8333-444455556666'), 'hex') AS scope_digest
  FROM (VALUES ('acme'), ('globex')) AS t(tenant);

\echo
\echo '3. A checkout: acquire, business write, complete — one transaction'
BEGIN;
SELECT outcome, handle, attempt FROM idem.acquire('acme', 'c0ffee00-1111-4222-8333-444455556666', '{"cart":"cart_42","amount_cents":1999}'::jsonb, caller => 'checkout', resource => 'cart_42') \gset
\echo '   acquire ->' :outcome ', fencing token' :attempt
INSERT INTO orders VALUES ('acme', 'ord_1001', 1999);
SELECT 'stored with the order, in the same transaction' AS complete
  FROM idem.complete(:'handle', :attempt, 201, '{"Location":"/orders/ord_1001","Content-Type":"application/json"}',
                     convert_to('{"order_id":"ord_1001","status":"created"}', 'UTF8'), 'ord_1001');
COMMIT;

\echo
\echo '4. The client retries (timeout on its side): replay of the stored response, byte for byte, no new order'
SELECT outcome, response_status, response_headers, convert_from(response_body, 'UTF8') AS body, order_id
  FROM idem.acquire('acme', 'c0ffee00-1111-4222-8333-444455556666', '{"amount_cents":1999,"cart":"cart_42"}'::jsonb, caller => 'checkout', resource => 'cart_42');
SELECT count(*) AS orders_for_acme FROM orders WHERE tenant_id = 'acme';

\echo
\echo '5. The same key with a different amount: mismatch (HTTP 422), nothing executes'
SELECT outcome FROM idem.acquire('acme', 'c0ffee00-1111-4222-8333-444455556666', '{"cart":"cart_42","amount_cents":2999}'::jsonb, caller => 'checkout', resource => 'cart_42');

\echo
\echo '6. A payment capture crashes after charging: the lease expires and the retry resumes at the checkpoint'
SELECT outcome, handle AS capture, attempt AS first_token FROM idem.acquire('acme', 'capture-7d3f0a9e-5b1c-4e2a', '{"payment":"pay_9","amount_cents":500}'::jsonb, lease => '200 milliseconds') \gset
\echo '   acquire ->' :outcome ', fencing token' :first_token
SELECT idem.checkpoint(:'capture', :first_token, 'charge_created', '{"charge_id":"ch_77"}') IS NOT NULL AS checkpointed;
\echo '   ... the worker dies here. A concurrent retry while the lease lives gets in_progress (HTTP 409):'
SELECT outcome, retry_after FROM idem.acquire('acme', 'capture-7d3f0a9e-5b1c-4e2a', '{"payment":"pay_9","amount_cents":500}'::jsonb);
SELECT pg_sleep(0.3) AS waiting_for_the_lease_to_expire;
SELECT outcome, handle AS new_capture, attempt AS new_token, recovery_point, recovery_data FROM idem.acquire('acme', 'capture-7d3f0a9e-5b1c-4e2a', '{"payment":"pay_9","amount_cents":500}'::jsonb) \gset
\echo '   acquire ->' :outcome ', fencing token' :new_token ', resume after' :recovery_point :recovery_data
\echo '   The dead worker comes back and tries to record its result: fenced out.'
\set ON_ERROR_STOP off
SELECT idem.complete(:'capture', :first_token, 200, '{}', 'stale');
\set ON_ERROR_STOP on
\echo '   The new holder verifies charge ch_77 with the processor (no second charge) and completes:'
SELECT 'stored' AS complete FROM idem.complete(:'new_capture', :new_token, 200, '{}', convert_to('{"charge_id":"ch_77","status":"paid"}', 'UTF8'),
                                               handler_response => '{"charge_id":"ch_77"}', local_status => 'paid');
SELECT status, attempt = :new_token AS completed_by_new_holder, recovery_point, convert_from(response_body, 'UTF8') AS stored_response FROM idem.keys WHERE client_key = 'capture-7d3f0a9e-5b1c-4e2a';

\echo
\echo '7. Bad input gets a named error and changes nothing'
\set ON_ERROR_STOP off
SELECT idem.acquire('acme', 'short', '{}'::jsonb);
SELECT idem.acquire('acme', 'a-valid-key-but-duplicate-json', '{"a":1,"a":2}'::text);
\set ON_ERROR_STOP on
SELECT count(*) AS key_records FROM idem.keys;

\echo
\echo '8. Orders move forward only: a state machine guards the status column, and logs every move'
CREATE TABLE order_status (order_id text PRIMARY KEY, tenant_id text NOT NULL DEFAULT 'acme', status text NOT NULL);
-- An operator registers the table (machine, status, key and tenant columns); the trigger follows it.
SELECT idem.register_machine_table('order_status', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER order_status_forward_only BEFORE INSERT OR UPDATE OF status, tenant_id, order_id ON order_status
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO order_status (order_id, status) VALUES ('ord_1001', 'created');
UPDATE order_status SET status = 'confirmed' WHERE order_id = 'ord_1001';
UPDATE order_status SET status = 'shipped' WHERE order_id = 'ord_1001';
\echo '   A refund of a shipped order is refused (shipped is terminal):'
\set ON_ERROR_STOP off
UPDATE order_status SET status = 'refunded' WHERE order_id = 'ord_1001';
\set ON_ERROR_STOP on
SELECT from_state, to_state, outcome FROM idem.transition_log WHERE row_key = 'ord_1001' ORDER BY log_id;

\echo
\echo '9. The operator on call: did we charge twice? (no: both attempts name the same charge) What happened under the key?'
SELECT count(*) AS double_charges FROM idem.double_charges();
SELECT outcome, mutation_type, generation, handler_called, handler_response ->> 'charge_id' AS charge, retry_count
  FROM idem.key_history('acme', 'capture-7d3f0a9e-5b1c-4e2a');

\echo
\echo '10. The order event leaves with the order (transactional outbox): never lost, never applied twice'
SELECT idem.create_topic('serving.checkout.order_intent') AS topic_created;
SELECT idem.create_consumer('sync_plane', ARRAY['serving.checkout.order_intent']);
CREATE TABLE synced_orders (order_id text PRIMARY KEY, amount text NOT NULL);
\echo '   Three checkouts emit their order_intent in their own transaction; the second one rolls back.'
BEGIN;
SELECT idem.emit('acme', 'serving.checkout.order_intent', '{"order_id":"ord_2001","amount":"19.99"}', 'ord_2001') AS event_id;
COMMIT;
BEGIN;
SELECT idem.emit('acme', 'serving.checkout.order_intent', '{"order_id":"ord_2002","amount":"5.00"}', 'ord_2002') AS event_id;
ROLLBACK;
BEGIN;
SELECT idem.emit('acme', 'serving.checkout.order_intent', '{"order_id":"ord_2003","amount":"7.50"}', 'ord_2003') AS event_id;
COMMIT;
SELECT consumer, topic, backlog FROM idem.outbox_lag;
\echo '   The sync plane claims (never blocks; in commit order) and, in one transaction, applies each'
\echo '   event once (consume_once) and acks the batch:'
CREATE TEMP TABLE batch AS SELECT * FROM idem.claim('sync_plane', NULL, 100, '30 seconds');
SELECT event_id, payload ->> 'order_id' AS order_id, attempt, redelivered FROM batch ORDER BY event_id;
BEGIN;
INSERT INTO synced_orders
  SELECT payload ->> 'order_id', payload ->> 'amount' FROM batch WHERE idem.consume_once('sync_plane', event_id, token);
SELECT idem.ack('sync_plane', array_agg(event_id), min(token::text)::uuid) AS acked FROM batch;
COMMIT;
\echo '   A redelivery (a worker that died before its ack) is refused by consume_once:'
SELECT event_id, idem.consume_once('sync_plane', event_id) AS apply_again FROM batch ORDER BY event_id;
SELECT order_id, amount FROM synced_orders ORDER BY order_id;
SELECT consumer, topic, backlog, dead_letters FROM idem.outbox_lag;
