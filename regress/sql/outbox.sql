-- The transactional outbox (0.3.0): emit writes an event in the caller's transaction and its
-- (tenant, topic) group gets a commit row at commit; consumers claim a group's events in commit
-- order, one claim per group at a time, ack or nack them, apply each effect once (consume_once),
-- and operators replay or discard dead letters, read the lag and purge what every consumer acked.
-- Every error name the outbox raises is triggered here, each time with proof that the refused
-- call changed nothing. Concurrency (other sessions' open transactions) is in the isolation
-- specs regress/specs/outbox_*.spec.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session

-- Event ids and commit positions come from one sequence, the emitting transactions' outbox ids
-- (txn_id) from another, both untouched before this file in the schedule's fresh database, so
-- the ids printed below are the same on every run.
SELECT last_value, is_called FROM idem.outbox_seq;
SELECT last_value, is_called FROM idem.outbox_txn_seq;

-- Helpers. ev: the events emitted here, by name. claims: every event a claim handed out, with
-- the claim's label and token (tokens are random: they are never printed, only compared).
CREATE TABLE ev (name text PRIMARY KEY, event_id bigint NOT NULL);
CREATE FUNCTION emit_as(p_name text, p_tenant text, p_topic text, p_payload jsonb DEFAULT '{}', p_key text DEFAULT NULL)
  RETURNS bigint LANGUAGE sql AS $$
  INSERT INTO ev VALUES (p_name, idem.emit(p_tenant, p_topic, p_payload, p_key)) RETURNING event_id $$;
CREATE FUNCTION ev(p_name text) RETURNS bigint LANGUAGE sql STABLE AS $$ SELECT event_id FROM ev WHERE name = p_name $$;
CREATE TABLE claims (label text, n bigint, event_id bigint, tenant_id text, topic text, payload jsonb,
                     attempt integer, redelivered boolean, token uuid);
-- take(label, consumer, ...): idem.claim, remembered under label; shows what it handed out, in
-- the order it did, and each event's name.
CREATE FUNCTION take(p_label text, p_consumer text, p_batch integer DEFAULT 100,
                     p_visibility interval DEFAULT '30 seconds', p_topics text[] DEFAULT NULL)
  RETURNS TABLE (n bigint, event text, event_id bigint, tenant_id text, topic text, payload jsonb, attempt integer, redelivered boolean)
  LANGUAGE sql AS $$
  WITH c AS (SELECT * FROM idem.claim(p_consumer, p_topics, p_batch, p_visibility) WITH ORDINALITY AS x),
       ins AS (INSERT INTO claims SELECT p_label, c.ordinality, c.event_id, c.tenant_id, c.topic, c.payload, c.attempt,
                                         c.redelivered, c.token FROM c RETURNING *)
  SELECT i.n, e.name, i.event_id, i.tenant_id, i.topic, i.payload, i.attempt, i.redelivered
    FROM ins i LEFT JOIN ev e ON e.event_id = i.event_id ORDER BY i.n $$;
CREATE FUNCTION tok(p_label text) RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT min(token::text)::uuid FROM claims WHERE label = p_label $$;
-- outbox_error(sql): expect_error(sql), with the claim tokens the message quotes replaced by
-- their claim's label (":c1"); any other uuid shows as <uuid>.
CREATE FUNCTION outbox_error(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v text := expect_error(sql);
  t record;
BEGIN
  FOR t IN SELECT DISTINCT label, token FROM claims WHERE token IS NOT NULL LOOP
    v := replace(v, t.token::text, ':' || t.label);
  END LOOP;
  RETURN regexp_replace(v, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g');
END $$;
-- outbox_rows: how many rows each outbox table holds. outbox_state(): a digest of all of them
-- (the sequence is not transactional and is left out): the same digest before and after a
-- refused call proves it changed nothing, updates included.
CREATE VIEW outbox_rows AS
SELECT (SELECT count(*) FROM idem.outbox_topics) AS topics,
       (SELECT count(*) FROM idem.outbox_consumers) AS consumers,
       (SELECT count(*) FROM idem.outbox_subscriptions) AS subs,
       (SELECT count(*) FROM idem.outbox_events) AS events,
       (SELECT count(*) FROM idem.outbox_commits) AS commits,
       (SELECT count(*) FROM idem.outbox_groups) AS groups,
       (SELECT count(*) FROM idem.outbox_cursors) AS cursors,
       (SELECT count(*) FROM idem.outbox_dead_letters) AS dead,
       (SELECT count(*) FROM idem.outbox_consumed) AS consumed;
CREATE FUNCTION outbox_state() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  t text;
  v text := '';
BEGIN
  FOR t IN SELECT relname FROM pg_class WHERE relnamespace = 'idem'::regnamespace AND relkind = 'r'
                                          AND relname LIKE 'outbox%' ORDER BY relname LOOP
    EXECUTE format('SELECT %L || coalesce(string_agg(x::text, %L ORDER BY x::text), %L) FROM idem.%I x', t, ',', '', t)
      INTO STRICT t;
    v := v || '|' || t;
  END LOOP;
  RETURN md5(v);
END $$;
-- cursor_of(consumer, tenant, topic): the delivery state of one group, with event and claim names.
-- The state is the newest version in idem.outbox_cursor_states.
CREATE FUNCTION cursor_of(p_consumer text, p_tenant text, p_topic text)
  RETURNS TABLE (acked text, claim text, claimed text[], claim_live boolean, claim_acked text[], head text,
                 head_attempts integer, head_error text, backing_off boolean)
  LANGUAGE sql AS $$
  SELECT (SELECT name FROM ev WHERE event_id = c.acked_event_id),
         (SELECT min(label) FROM claims WHERE token = c.claim_token),
         CASE WHEN c.claim_events IS NOT NULL THEN
           ARRAY(SELECT coalesce(e.name, x::text) FROM unnest(c.claim_events) WITH ORDINALITY u(x, i) LEFT JOIN ev e ON e.event_id = u.x ORDER BY u.i) END,
         c.claim_until > clock_timestamp(),
         CASE WHEN c.claim_acked IS NOT NULL THEN
           ARRAY(SELECT coalesce(e.name, x::text) FROM unnest(c.claim_acked) u(x) LEFT JOIN ev e ON e.event_id = u.x ORDER BY 1) END,
         (SELECT name FROM ev WHERE event_id = c.head_event_id), c.head_attempts,
         regexp_replace(c.head_error, '^claim expired at .* without an ack$', 'claim expired at <time> without an ack'),
         c.not_before > clock_timestamp()
    FROM idem.outbox_cursor_states c WHERE c.consumer = p_consumer AND c.tenant_id = p_tenant AND c.topic = p_topic
   ORDER BY c.version DESC LIMIT 1 $$;

--
-- Registering topics and consumers.
--
SELECT idem.create_topic('orders', 'order lifecycle') AS created;
SELECT idem.create_topic('orders', 'another description') AS created_again;
SELECT idem.create_topic('payments') AS created;
SELECT topic, description FROM idem.outbox_topics ORDER BY topic;
SELECT idem.create_consumer('audit', '{orders,orders}', max_attempts => 2);
SELECT consumer, max_attempts FROM idem.outbox_consumers ORDER BY consumer;
-- Called again, a consumer gains topics and keeps its max_attempts unless one is given (NULL,
-- the default, means "keep"); a given one replaces it. A new consumer gets 5 unless told (mailer,
-- below).
SELECT idem.create_consumer('audit', '{payments}');
SELECT consumer, max_attempts AS kept FROM idem.outbox_consumers ORDER BY consumer;
SELECT idem.create_consumer('audit', '{payments}', max_attempts => 3);
SELECT consumer, max_attempts AS replaced FROM idem.outbox_consumers ORDER BY consumer;
SELECT idem.create_consumer('audit', '{orders}', NULL);
SELECT consumer, max_attempts AS kept_on_null FROM idem.outbox_consumers ORDER BY consumer;
SELECT consumer, topic FROM idem.outbox_subscriptions ORDER BY consumer, topic;
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.create_topic(NULL)$$) AS null_topic;
SELECT outbox_error($$SELECT idem.create_topic('')$$) AS empty_topic;
SELECT outbox_error($$SELECT idem.create_topic('-orders')$$) AS leading_dash;
SELECT outbox_error($$SELECT idem.create_topic('order events')$$) AS with_space;
SELECT replace(outbox_error(format('SELECT idem.create_topic(%L)', repeat('t', 201))), repeat('t', 201), '<201 t>') AS too_long;
SELECT outbox_error($$SELECT idem.create_consumer(NULL, '{orders}')$$) AS null_consumer;
SELECT outbox_error($$SELECT idem.create_consumer('bad/name', '{orders}')$$) AS bad_consumer;
SELECT outbox_error($$SELECT idem.create_consumer('c', NULL)$$) AS null_topics;
SELECT outbox_error($$SELECT idem.create_consumer('c', '{}')$$) AS no_topics;
SELECT outbox_error($$SELECT idem.create_consumer('c', '{orders,NULL}')$$) AS null_in_topics;
SELECT outbox_error($$SELECT idem.create_consumer('c', '{orders}', 0)$$) AS zero_attempts;
SELECT outbox_error($$SELECT idem.create_consumer('c', '{orders}', 1001)$$) AS too_many_attempts;
SELECT outbox_error($$SELECT idem.create_consumer('c', '{orders,nope}')$$) AS unknown_topic;
SELECT error_hint($$SELECT idem.create_consumer('c', '{orders,nope}')$$) AS hint;
-- A refused call on an existing consumer leaves it as it was.
SELECT outbox_error($$SELECT idem.create_consumer('audit', '{nope}')$$) AS unknown_topic;
SELECT outbox_error($$SELECT idem.create_consumer('audit', '{orders}', 0)$$) AS zero_attempts;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT idem.create_topic(repeat('t', 200)) AS longest_name;

--
-- emit: the event exists if and only if its transaction commits; the commit row is drawn at
-- commit, per (tenant, topic).
--
-- A committed emit: one event, one commit row after every id its transaction drew, one group.
-- Event and commit row carry the transaction's outbox id (txn_id), the first value of
-- idem.outbox_txn_seq: drawn at the transaction's first emit.
SELECT emit_as('e1', 't-emit', 'orders', '{"order":"o-1"}', 'o-1') AS e1;
SELECT e.event_id, e.tenant_id, e.topic, e.key, e.payload, e.txn_id, m.position, m.position > e.event_id AS drawn_after,
       m.committed_at >= e.emitted_at AS committed_after
  FROM idem.outbox_events e JOIN idem.outbox_commits m USING (tenant_id, topic, txn_id) WHERE e.tenant_id = 't-emit';
SELECT tenant_id, topic FROM idem.outbox_groups ORDER BY 1, 2;
-- A rolled-back emit: the event is visible inside its transaction, without a commit row (drawn
-- only at commit); after the rollback nothing is left: no event, no commit row, no group.
BEGIN;
SELECT emit_as('e-rolled-back', 't-rb', 'orders', '{"order":"o-2"}') AS rolled_back_id;
SELECT count(*) AS events_inside FROM idem.outbox_events WHERE tenant_id = 't-rb';
SELECT count(*) AS commits_inside FROM idem.outbox_commits WHERE tenant_id = 't-rb';
ROLLBACK;
SELECT (SELECT count(*) FROM idem.outbox_events WHERE tenant_id = 't-rb') AS events,
       (SELECT count(*) FROM idem.outbox_commits WHERE tenant_id = 't-rb') AS commits,
       (SELECT count(*) FROM idem.outbox_groups WHERE tenant_id = 't-rb') AS groups;
-- Inside a rolled-back savepoint: the same, whether the transaction emits nothing else ...
BEGIN;
SAVEPOINT sp;
SELECT idem.emit('t-sp', 'orders', '{"n":1}') > 0 AS emitted;
ROLLBACK TO SAVEPOINT sp;
COMMIT;
SELECT (SELECT count(*) FROM idem.outbox_events WHERE tenant_id = 't-sp') AS events,
       (SELECT count(*) FROM idem.outbox_commits WHERE tenant_id = 't-sp') AS commits;
-- ... or commits an event of another group, beside an emit refused in the same transaction.
-- Only the committed event's group gets a commit row (bug: the rolled-back and the refused
-- groups got an empty commit row and a group row, a phantom group of an unknown topic).
BEGIN;
SAVEPOINT sp;
SELECT idem.emit('t-sp', 'orders', '{"n":2}') > 0 AS emitted;
ROLLBACK TO SAVEPOINT sp;
SELECT emit_as('e-sp', 't-sp', 'payments', '{"n":3}') AS e_sp;
SELECT outbox_error($$SELECT idem.emit('t-sp', 'nope', '{}')$$) AS refused_in_same_transaction;
COMMIT;
SELECT m.tenant_id, m.topic, array_agg(e.event_id) AS events
  FROM idem.outbox_commits m LEFT JOIN idem.outbox_events e USING (tenant_id, topic, txn_id)
 WHERE m.tenant_id = 't-sp' GROUP BY 1, 2 ORDER BY 1, 2;
SELECT tenant_id, topic FROM idem.outbox_groups WHERE tenant_id = 't-sp' ORDER BY 1, 2;
-- Two groups in one transaction (and two events in one of them): one commit row per group, both
-- of the one transaction, each drawn at commit, after every id the transaction drew.
BEGIN;
SELECT emit_as('two-a', 't-two', 'orders', '{"n":1}') AS two_a;
SELECT emit_as('two-b', 't-two', 'payments', '{"n":2}') AS two_b;
SELECT emit_as('two-c', 't-two', 'orders', '{"n":3}') AS two_c;
COMMIT;
SELECT m.topic, array_agg(e.event_id ORDER BY e.event_id) AS events,
       m.position > (SELECT max(event_id) FROM ev WHERE name LIKE 'two-%') AS drawn_at_commit
  FROM idem.outbox_commits m JOIN idem.outbox_events e USING (tenant_id, topic, txn_id)
 WHERE m.tenant_id = 't-two' GROUP BY m.topic, m.position ORDER BY m.topic;
SELECT count(DISTINCT txn_id) AS transactions, count(*) AS commit_rows FROM idem.outbox_commits WHERE tenant_id = 't-two';
-- Positions follow commit order: each transaction's is drawn at its commit, so a later one's is
-- higher; events of one transaction share it, in emit order. (A session commits one transaction
-- at a time: the isolation spec outbox_late_commit_delivered_in_commit_order has a transaction
-- that emitted first and committed last.)
SELECT emit_as('two-d', 't-two', 'orders', '{"n":4}') AS two_d;
SELECT array_agg(m.position ORDER BY m.position) AS positions,
       array_agg(e.name ORDER BY m.position, e.event_id) AS events_in_delivery_order
  FROM idem.outbox_commits m JOIN idem.outbox_events x USING (tenant_id, topic, txn_id) JOIN ev e ON e.event_id = x.event_id
 WHERE m.tenant_id = 't-two' AND m.topic = 'orders';
-- Refused emits change nothing.
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.emit('t-emit', 'nope', '{}')$$) AS unknown_topic;
SELECT error_hint($$SELECT idem.emit('t-emit', 'nope', '{}')$$) AS hint;
SELECT outbox_error($$SELECT idem.emit('t-emit', NULL, '{}')$$) AS null_topic;
SELECT outbox_error($$SELECT idem.emit(NULL, 'orders', '{}')$$) AS null_tenant;
SELECT outbox_error($$SELECT idem.emit('', 'orders', '{}')$$) AS empty_tenant;
SELECT outbox_error($$SELECT idem.emit(E't-emit\n', 'orders', '{}')$$) AS control_in_tenant;
SELECT outbox_error($$SELECT idem.emit(repeat('t', 257), 'orders', '{}')$$) AS long_tenant;
SELECT outbox_error($$SELECT idem.emit('t-emit', 'orders', NULL)$$) AS null_payload;
SELECT outbox_error($$SELECT idem.emit('t-emit', 'orders', '{}', E'o-\u0001')$$) AS control_in_key;
SELECT outbox_error($$SELECT idem.emit('t-emit', 'orders', '{}', E'o-\x7f')$$) AS del_in_key;
SELECT outbox_error($$SELECT idem.emit('t-emit', 'orders', '{}', '')$$) AS empty_key;
SELECT outbox_error($$SELECT idem.emit('t-emit', 'orders', '{}', repeat('k', 1025))$$) AS long_key;
SET idem.max_payload_bytes = '1kB';
SELECT outbox_error($$SELECT idem.emit('t-emit', 'orders', jsonb_build_object('pad', repeat('x', 2000)))$$) AS too_large;
SELECT error_hint($$SELECT idem.emit('t-emit', 'orders', jsonb_build_object('pad', repeat('x', 2000)))$$) AS hint;
RESET idem.max_payload_bytes;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
-- A payload that fits, and a key at its limit.
SELECT emit_as('e-big', 't-emit', 'orders', jsonb_build_object('pad', repeat('x', 2000)), repeat('k', 1024)) > 0 AS emitted;
-- The committed events are what a consumer of the topics is handed, each group in commit order
-- (here: groups by tenant and topic, the order of a first claim).
SELECT n, event, tenant_id, topic, attempt, redelivered FROM take('audit-1', 'audit');
SELECT idem.ack('audit', ARRAY(SELECT event_id FROM claims WHERE label = 'audit-1'), tok('audit-1')) AS acked;

--

-- Continued in regress/sql/outbox_claim_ack.sql and the files after it (regress/schedule).
