-- The consumer's calls in their tenant-first forms (what Citus runs on the tenant's node,
-- docs/citus.md), on one node: claim_tenant hands out one tenant's groups, outbox_backlog names the
-- groups a claim would take, and ack, nack and consume_once act only on the named tenant's events.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';
SELECT idem.create_topic('parcels');
SELECT idem.create_consumer('courier', '{parcels}', max_attempts => 3);
SELECT idem.emit('tf-a', 'parcels', '{"p":1}') AS a1 \gset
SELECT idem.emit('tf-a', 'parcels', '{"p":2}') AS a2 \gset
SELECT idem.emit('tf-b', 'parcels', '{"p":3}') AS b1 \gset
SELECT tenant_id, topic FROM idem.outbox_backlog('courier');
-- Only tf-a's events, in commit order.
CREATE TEMP TABLE got AS SELECT * FROM idem.claim_tenant('courier', 'tf-a');
SELECT payload, attempt, redelivered FROM got ORDER BY event_id;
SELECT count(DISTINCT token) AS tokens FROM got;
SELECT token AS tok FROM got LIMIT 1 \gset
-- While the claim is live, tf-a has nothing to hand out, and the backlog names tf-b alone.
SELECT count(*) AS again FROM idem.claim_tenant('courier', 'tf-a');
SELECT tenant_id, topic FROM idem.outbox_backlog('courier');
SELECT idem.consume_once('courier', 'tf-a', :a1, :'tok') AS first_time;
SELECT idem.consume_once('courier', 'tf-a', :a1, :'tok') AS redelivery;
-- Another tenant's event is not there for this tenant's calls (the error without the event's id,
-- which depends on the tests before).
CREATE FUNCTION pg_temp.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN regexp_replace(SQLERRM, '[0-9]+', 'N', 'g');
END $$;
SELECT pg_temp.error_of(format('SELECT idem.consume_once(%L, %L, %s, %L)', 'courier', 'tf-b', :a1, :'tok'));
SELECT pg_temp.error_of(format('SELECT idem.ack(%L, %L, ARRAY[%s]::bigint[], %L)', 'courier', 'tf-b', :a1, :'tok'));
SELECT pg_temp.error_of(format('SELECT idem.nack(%L, %L, %s, %L, %L, NULL)', 'courier', 'tf-b', :a2, :'tok', 'wrong tenant'));
-- A NULL tenant is refused by each form.
SELECT count(*) FROM idem.claim_tenant('courier', NULL);
SELECT idem.consume_once('courier', NULL, :a1, :'tok');
SELECT idem.ack('courier', NULL, ARRAY[:a1]::bigint[], :'tok');
SELECT idem.nack('courier', NULL, :a2, :'tok', 'no tenant', NULL);
-- The first event acked, the second nacked: it comes back on the next claim of tf-a.
SELECT idem.ack('courier', 'tf-a', ARRAY[:a1]::bigint[], :'tok') AS acked;
SELECT idem.nack('courier', 'tf-a', :a2, :'tok', 'courier down', interval '0') AS nacked;
SELECT payload, attempt FROM idem.claim_tenant('courier', 'tf-a');
-- tf-b through the plain claim, which still takes every tenant on one node.
SELECT payload FROM idem.claim('courier');
SELECT backlog FROM idem.outbox_lag WHERE consumer = 'courier';
