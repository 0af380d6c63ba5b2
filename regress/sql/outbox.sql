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
-- The state is the newest row of idem.outbox_cursor_states where the state is kept as appended
-- versions, else the group's row of idem.outbox_cursors.
CREATE FUNCTION cursor_of(p_consumer text, p_tenant text, p_topic text)
  RETURNS TABLE (acked text, claim text, claimed text[], claim_live boolean, claim_acked text[], head text,
                 head_attempts integer, head_error text, backing_off boolean)
  LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
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
    FROM idem.%I c WHERE c.consumer = $1 AND c.tenant_id = $2 AND c.topic = $3 %s $q$,
    CASE WHEN to_regclass('idem.outbox_cursor_states') IS NULL THEN 'outbox_cursors' ELSE 'outbox_cursor_states' END,
    CASE WHEN to_regclass('idem.outbox_cursor_states') IS NULL THEN '' ELSE 'ORDER BY c.version DESC LIMIT 1' END)
    USING p_consumer, p_tenant, p_topic;
END $$;

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
-- claim: each group's events in (position, event_id) order, to one claim at a time, under one
-- token; never waits.
--
SELECT idem.create_topic('invoices');
SELECT idem.create_consumer('billing', '{invoices}', max_attempts => 3);
BEGIN;
SELECT emit_as('i1', 't-c', 'invoices', '{"i":1}', 'inv-1') AS i1;
SELECT emit_as('i2', 't-c', 'invoices', '{"i":2}', 'inv-2') AS i2;
COMMIT;
SELECT emit_as('i3', 't-c', 'invoices', '{"i":3}') AS i3;
SELECT emit_as('j1', 't-d', 'invoices', '{"j":1}') AS j1;
SELECT emit_as('i4', 't-c', 'invoices', '{"i":4}') AS i4;
SELECT emit_as('i5', 't-c', 'invoices', '{"i":5}') AS i5;
-- The batch limit: two events, the oldest of group (t-c, invoices); the rest of that group waits
-- for this claim, (t-d, invoices) goes to the next claim; then every group is claimed.
SELECT * FROM take('c1', 'billing', 2);
SELECT count(*) AS events, count(DISTINCT token) AS tokens, bool_and(token IS NOT NULL) AS has_token FROM claims WHERE label = 'c1';
SELECT * FROM take('c2', 'billing');
SELECT * FROM take('c3', 'billing');
SELECT * FROM cursor_of('billing', 't-c', 'invoices');
-- A claim whose topics the consumer does not subscribe to, a bad batch or visibility: refused.
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT * FROM idem.claim('nobody')$$) AS unknown_consumer;
SELECT error_hint($$SELECT * FROM idem.claim('nobody')$$) AS hint;
SELECT outbox_error($$SELECT * FROM idem.claim(NULL)$$) AS null_consumer;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', '{orders}')$$) AS unsubscribed_topic;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', '{invoices,nope}')$$) AS unknown_topic;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', '{invoices,NULL}')$$) AS null_topic;
SELECT error_hint($$SELECT * FROM idem.claim('billing', '{nope}')$$) AS hint;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', batch => 0)$$) AS zero_batch;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', batch => 10001)$$) AS huge_batch;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', batch => NULL)$$) AS null_batch;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', visibility => '0')$$) AS zero_visibility;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', visibility => '-1 second')$$) AS negative_visibility;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', visibility => '12 hours 1 second')$$) AS long_visibility;
SELECT outbox_error($$SELECT * FROM idem.claim('billing', visibility => NULL)$$) AS null_visibility;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;

--
-- ack: by event or array; the cursor moves over the acked prefix of the claim; re-acks under the
-- same token are no-ops; the count says how many were newly acked.
--
SELECT idem.ack('billing', ev('i1'), tok('c1')) AS single_ack_returns_void;
SELECT * FROM cursor_of('billing', 't-c', 'invoices');
SELECT idem.ack('billing', ARRAY[ev('i1'), ev('i2')], tok('c1')) AS newly_acked;
SELECT idem.ack('billing', ARRAY[ev('i1'), ev('i2')], tok('c1')) AS reacked;
SELECT idem.ack('billing', ev('i2'), tok('c1')) AS reacked_single;
SELECT * FROM cursor_of('billing', 't-c', 'invoices');
-- The next claim of the group starts after the acked prefix.
SELECT * FROM take('c4', 'billing', p_topics => '{invoices}');
-- Out of order: i5 is acked before i3 and i4; the cursor waits for the prefix. Acking i5 again
-- is not new (bug: it was counted again, and again when the prefix was acked).
SELECT idem.ack('billing', ARRAY[ev('i5')], tok('c4')) AS newly_acked;
SELECT * FROM cursor_of('billing', 't-c', 'invoices');
SELECT idem.ack('billing', ARRAY[ev('i5')], tok('c4')) AS reacked;
-- Refused acks change nothing: an unknown consumer, a bad token or id list, an unknown event, an
-- event of a topic the consumer does not subscribe to, another claim's token (the open claim of
-- t-d is c2's), an event outside any open claim, and a batch with one bad event among good ones.
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.ack('nobody', ev('i3'), tok('c4'))$$) AS unknown_consumer;
SELECT outbox_error($$SELECT idem.ack('billing', ev('i3'), NULL)$$) AS null_token;
SELECT outbox_error($$SELECT idem.ack('billing', NULL::bigint[], tok('c4'))$$) AS null_ids;
SELECT outbox_error($$SELECT idem.ack('billing', '{}'::bigint[], tok('c4'))$$) AS no_ids;
SELECT outbox_error($$SELECT idem.ack('billing', ARRAY[ev('i3'), NULL], tok('c4'))$$) AS null_id;
SELECT outbox_error($$SELECT idem.ack('billing', 999999, tok('c4'))$$) AS unknown_event;
SELECT outbox_error($$SELECT idem.ack('billing', ARRAY[ev('i3'), 999999], tok('c4'))$$) AS unknown_among_known;
SELECT outbox_error($$SELECT idem.ack('billing', ev('e1'), tok('c4'))$$) AS other_topic;
SELECT outbox_error($$SELECT idem.ack('billing', ev('j1'), tok('c4'))$$) AS other_claims_token;
SELECT error_hint($$SELECT idem.ack('billing', ev('j1'), tok('c4'))$$) AS hint;
-- i1 is behind the cursor and c4 is the group's newest claim: acked again without effect.
SELECT idem.ack('billing', ARRAY[ev('i1')], tok('c4')) AS behind_cursor_newest_token;
SELECT outbox_error($$SELECT idem.ack('billing', ev('i1'), tok('c2'))$$) AS behind_cursor_other_token;
SELECT outbox_error($$SELECT idem.ack('billing', ARRAY[ev('i3'), ev('i4'), ev('j1')], tok('c4'))$$) AS one_bad_in_batch;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT * FROM cursor_of('billing', 't-c', 'invoices');
-- The prefix: i3 and i4 are new, i5 was acked before; the claim is closed.
SELECT idem.ack('billing', ARRAY[ev('i5'), ev('i4'), ev('i3')], tok('c4')) AS newly_acked;
SELECT * FROM cursor_of('billing', 't-c', 'invoices');
SELECT idem.ack('billing', ARRAY[ev('i3'), ev('i4'), ev('i5')], tok('c4')) AS reacked;
SELECT idem.ack('billing', ev('j1'), tok('c2')) AS acked_j1;
-- An event emitted after the claim is not part of it (c4 was acked in full and never held i6;
-- the message names the possible causes).
SELECT emit_as('i6', 't-c', 'invoices', '{"i":6}') AS i6;
SELECT outbox_error($$SELECT idem.ack('billing', ev('i6'), tok('c4'))$$) AS not_handed_out;
SELECT * FROM take('c5', 'billing');
SELECT idem.ack('billing', ev('i6'), tok('c5'));

--
-- nack: the group's oldest unacked event failed; it is retried after retry_in (default 1 s
-- doubling); its max_attempts-th failure makes it a dead letter and the group moves on.
--
SELECT idem.create_topic('refunds');
SELECT idem.create_consumer('refunder', '{refunds}', max_attempts => 3);
SELECT emit_as('r1', 't-r', 'refunds', '{"refund":"rf-1"}', 'rf-1') AS r1;
SELECT emit_as('r2', 't-r', 'refunds', '{"refund":"rf-2"}', 'rf-2') AS r2;
SELECT * FROM take('n1', 'refunder');
-- Only the oldest unacked event of the claim can be nacked; the other refusals change nothing.
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r2'), tok('n1'), 'boom')$$) AS not_the_head;
SELECT outbox_error($$SELECT idem.nack('nobody', ev('r1'), tok('n1'), 'boom')$$) AS unknown_consumer;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), NULL, 'boom')$$) AS null_token;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('n1'), NULL)$$) AS null_error;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('n1'), '  ')$$) AS blank_error;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('n1'), 'boom', '-1 second')$$) AS negative_retry;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('n1'), 'boom', '1 day 1 second')$$) AS long_retry;
SELECT outbox_error($$SELECT idem.nack('refunder', 999999, tok('n1'), 'boom')$$) AS unknown_event;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('i6'), tok('n1'), 'boom')$$) AS other_topic;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('c5'), 'boom')$$) AS other_token;
SELECT error_hint($$SELECT idem.nack('refunder', ev('r1'), tok('c5'), 'boom')$$) AS hint;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
-- First failure: retry at once (retry_in 0); the whole claim is given back.
SELECT idem.nack('refunder', ev('r1'), tok('n1'), 'processor answered 503', retry_in => '0') AS outcome;
SELECT * FROM cursor_of('refunder', 't-r', 'refunds');
-- The given-back claim's token acks nothing any more.
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.ack('refunder', ev('r2'), tok('n1'))$$) AS given_back;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('n1'), 'again')$$) AS nack_given_back;
SELECT error_hint($$SELECT idem.nack('refunder', ev('r1'), tok('n1'), 'again')$$) AS hint;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT * FROM take('n2', 'refunder', 1);
SELECT idem.nack('refunder', ev('r1'), tok('n2'), 'processor answered 502', retry_in => '0') AS outcome;
SELECT * FROM cursor_of('refunder', 't-r', 'refunds');
SELECT * FROM take('n3', 'refunder', 1);
-- Third failure of three: a dead letter with its last error; the group moves on to r2.
SELECT idem.nack('refunder', ev('r1'), tok('n3'), repeat('card expired; ', 200), retry_in => '0') AS outcome;
SELECT * FROM cursor_of('refunder', 't-r', 'refunds');
SELECT d.consumer, e.name, d.tenant_id, d.topic, d.key, d.payload, d.attempts, length(d.last_error) AS error_length,
       left(d.last_error, 28) AS last_error, d.position = m.position AS position_kept, d.resolved_at, d.replay_requested_at
  FROM idem.outbox_dead_letters d JOIN ev e USING (event_id) JOIN idem.outbox_commits m ON m.tenant_id = d.tenant_id AND m.topic = d.topic AND m.position = d.position;
-- The claim that held it cannot ack it now: it is a dead letter (until replayed).
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.ack('refunder', ev('r1'), tok('n3'))$$) AS ack_after_nack_made_it_dead;
SELECT error_hint($$SELECT idem.ack('refunder', ev('r1'), tok('n3'))$$) AS hint;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT * FROM take('n4', 'refunder');
SELECT idem.ack('refunder', ev('r2'), tok('n4'));
-- The default backoff: 1 s after a first failure; the group is claimed again after it. A retry
-- an hour away keeps it out of every later claim here.
SELECT emit_as('r3', 't-r2', 'refunds', '{"refund":"rf-3"}') AS r3;
SELECT * FROM take('n5', 'refunder');
SELECT idem.nack('refunder', ev('r3'), tok('n5'), 'timeout') AS outcome;
SELECT * FROM cursor_of('refunder', 't-r2', 'refunds');
SELECT * FROM take('n6', 'refunder');
SELECT pg_sleep(1.05);
SELECT * FROM take('n7', 'refunder');
SELECT idem.nack('refunder', ev('r3'), tok('n7'), 'timeout again', retry_in => '1 hour') AS outcome;
SELECT * FROM cursor_of('refunder', 't-r2', 'refunds');
SELECT * FROM take('n8', 'refunder');

--
-- An expired claim: the next claim takes the group over (a failure of its oldest event); the old
-- token is refused; expiries count toward the dead letter too.
--
SELECT idem.create_topic('shipments');
SELECT idem.create_consumer('shipper', '{shipments}', max_attempts => 2);
SELECT emit_as('s1', 't-s', 'shipments', '{"parcel":"p-1"}') AS s1;
SELECT emit_as('s2', 't-s', 'shipments', '{"parcel":"p-2"}') AS s2;
SELECT * FROM take('x1', 'shipper', 1, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT * FROM cursor_of('shipper', 't-s', 'shipments');
-- Taken over: the expiry counted as s1's first failure; x1's late ack, effect and nack are
-- refused (x2's claim expires too, but until a claim takes it over it stays x2's).
SELECT * FROM take('x2', 'shipper', 1, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT * FROM cursor_of('shipper', 't-s', 'shipments');
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.ack('shipper', ev('s1'), tok('x1'))$$) AS late_ack;
SELECT error_hint($$SELECT idem.ack('shipper', ev('s1'), tok('x1'))$$) AS hint;
SELECT outbox_error($$SELECT idem.consume_once('shipper', ev('s1'), tok('x1'))$$) AS late_effect;
SELECT error_hint($$SELECT idem.consume_once('shipper', ev('s1'), tok('x1'))$$) AS hint;
SELECT outbox_error($$SELECT idem.nack('shipper', ev('s1'), tok('x1'), 'late')$$) AS late_nack;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
-- The second expiry of two: s1 goes to the dead letters, and the same claim hands out s2.
SELECT * FROM take('x3', 'shipper');
SELECT e.name, d.attempts, regexp_replace(d.last_error, '^claim expired at .* without an ack$', 'claim expired at <time> without an ack') AS last_error
  FROM idem.outbox_dead_letters d JOIN ev e USING (event_id) WHERE d.consumer = 'shipper';
-- The time in the message is the expired claim's deadline in ISO 8601 UTC (this session's
-- TimeZone is not UTC): x2's deadline, a moment ago.
SELECT substring(d.last_error FROM '^claim expired at ([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z) without an ack$') IS NOT NULL AS iso_utc,
       substring(d.last_error FROM '^claim expired at (.*) without an ack$')::timestamptz
         BETWEEN clock_timestamp() - interval '1 minute' AND clock_timestamp() AS a_moment_ago,
       current_setting('TimeZone') <> 'UTC' AS session_not_utc
  FROM idem.outbox_dead_letters d WHERE d.consumer = 'shipper';
SELECT * FROM cursor_of('shipper', 't-s', 'shipments');
-- x3 handed out s2 after s1 went to the dead letters: under x3, s1 is a dead letter, alone or
-- beside s2 (refused whole).
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.ack('shipper', ev('s1'), tok('x3'))$$) AS ack_after_expiry_made_it_dead;
SELECT outbox_error($$SELECT idem.ack('shipper', ARRAY[ev('s1'), ev('s2')], tok('x3'))$$) AS with_a_live_one;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT idem.ack('shipper', ev('s2'), tok('x3'));

--
-- Dead letters: outbox_replay hands one out again (before the groups' events, under the same
-- claim); ack closes it as replayed, nack makes it a dead letter again; outbox_discard closes it
-- without applying it.
--
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.outbox_replay('nobody', ev('r1'))$$) AS unknown_consumer;
SELECT outbox_error($$SELECT idem.outbox_replay('refunder', ev('r2'))$$) AS not_a_dead_letter;
SELECT error_hint($$SELECT idem.outbox_replay('refunder', ev('r2'))$$) AS hint;
SELECT outbox_error($$SELECT idem.outbox_replay('refunder', NULL)$$) AS null_event;
SELECT outbox_error($$SELECT idem.outbox_replay('shipper', ev('r1'))$$) AS another_consumers;
SELECT outbox_error($$SELECT idem.outbox_discard('shipper', ev('s1'), '')$$) AS blank_reason;
SELECT outbox_error($$SELECT idem.outbox_discard('shipper', ev('s1'), NULL)$$) AS null_reason;
SELECT outbox_error($$SELECT idem.outbox_discard('shipper', ev('s2'), 'lost')$$) AS discard_not_dead;
SELECT outbox_error($$SELECT idem.outbox_discard('nobody', ev('s1'), 'lost')$$) AS unknown_consumer;
-- A dead letter not (yet) claimed for replay cannot be acked or nacked: under the group's newest
-- claim (n4) it is a dead letter, under an older one not in any open claim.
SELECT outbox_error($$SELECT idem.ack('refunder', ev('r1'), tok('n4'))$$) AS ack_dead_letter;
SELECT outbox_error($$SELECT idem.ack('refunder', ev('r1'), tok('n3'))$$) AS ack_dead_letter_old_token;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('n4'), 'x')$$) AS nack_dead_letter;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT idem.outbox_replay('refunder', ev('r1'));
SELECT outbox_error($$SELECT idem.ack('refunder', ev('r1'), tok('n4'))$$) AS ack_before_claim;
-- Asked twice before a claim: still one replay.
SELECT idem.outbox_replay('refunder', ev('r1'));
SELECT emit_as('r4', 't-r', 'refunds', '{"refund":"rf-4"}') AS r4;
SELECT * FROM take('rp1', 'refunder', p_topics => '{refunds}');
-- While rp1 holds the replay: another token's ack or nack is refused, alone or beside the group's
-- event, and so is a second replay (the worker may be applying it right now).
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.ack('refunder', ev('r1'), tok('n4'))$$) AS replay_other_token;
SELECT outbox_error($$SELECT idem.ack('refunder', ARRAY[ev('r1'), ev('r4')], tok('n4'))$$) AS both_other_token;
SELECT outbox_error($$SELECT idem.nack('refunder', ev('r1'), tok('n4'), 'x')$$) AS replay_nack_other_token;
SELECT outbox_error($$SELECT idem.outbox_replay('refunder', ev('r1'))$$) AS replay_while_claimed;
SELECT error_hint($$SELECT idem.outbox_replay('refunder', ev('r1'))$$) AS hint;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
-- Failing again: a dead letter again, one more attempt, not handed out until replayed again; the
-- group's event of the same claim is acked as usual.
SELECT idem.nack('refunder', ev('r1'), tok('rp1'), 'still expired', retry_in => '0') AS outcome;
SELECT idem.ack('refunder', ev('r4'), tok('rp1'));
SELECT e.name, d.attempts, d.last_error, d.replay_requested_at IS NULL AS replay_done, d.claim_token IS NULL AS unclaimed, d.resolved_at
  FROM idem.outbox_dead_letters d JOIN ev e USING (event_id) WHERE d.consumer = 'refunder';
SELECT * FROM take('rp2', 'refunder');
SELECT idem.outbox_replay('refunder', ev('r1'));
SELECT emit_as('r5', 't-r', 'refunds', '{"refund":"rf-5"}') AS r5;
-- One claim: the replay first, then the group's new event.
SELECT * FROM take('rp3', 'refunder');
-- The replay's claim token fences its effect like a group claim's.
SELECT idem.consume_once('refunder', ev('r1'), tok('rp3')) AS applied;
-- (Bug: with rp1's group claim acked, the group had no open claim and a stale token passed.)
SELECT outbox_error($$SELECT idem.consume_once('refunder', ev('r1'), tok('rp1'))$$) AS stale_token;
-- Both acked in one call (bug: refused as ERR_OUTBOX_NOT_CLAIMED, so a worker acking its whole
-- batch could never ack it): the dead letter is closed as replayed, the group's cursor moves
-- over r5 and its claim is closed.
SELECT idem.ack('refunder', ARRAY[ev('r1'), ev('r5')], tok('rp3')) AS acked;
SELECT e.name, d.attempts, d.resolution, d.resolved_at IS NOT NULL AS resolved, d.resolution_note
  FROM idem.outbox_dead_letters d JOIN ev e USING (event_id) ORDER BY d.consumer;
SELECT * FROM cursor_of('refunder', 't-r', 'refunds');
-- Acked again under the same token, together or alone: no-ops. A replay of it is refused: it is
-- no longer an open dead letter.
SELECT outbox_state() AS s0 \gset
SELECT idem.ack('refunder', ARRAY[ev('r1'), ev('r5')], tok('rp3')) AS reacked;
SELECT idem.ack('refunder', ARRAY[ev('r1')], tok('rp3')) AS reacked_replay;
SELECT idem.ack('refunder', ev('r1'), tok('rp3')) AS reacked_single;
SELECT outbox_error($$SELECT idem.outbox_replay('refunder', ev('r1'))$$) AS replay_resolved;
SELECT outbox_error($$SELECT idem.ack('refunder', ev('r1'), tok('rp1'))$$) AS ack_resolved_other_token;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT idem.outbox_discard('shipper', ev('s1'), 'parcel lost; refunded by hand') AS discarded;
SELECT e.name, d.resolution, d.resolution_note FROM idem.outbox_dead_letters d JOIN ev e USING (event_id) ORDER BY d.consumer;
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.outbox_discard('shipper', ev('s1'), 'again')$$) AS discard_resolved;
SELECT outbox_error($$SELECT idem.outbox_replay('shipper', ev('s1'))$$) AS replay_discarded;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT * FROM take('rp4', 'shipper');

--
-- consume_once: true the first time a consumer applies an event, false after; in the effect's
-- transaction (a rollback forgets it); with the claim token it refuses a claim taken over.
--
SELECT idem.create_topic('emails');
SELECT idem.create_consumer('mailer', '{emails}');
SELECT idem.create_consumer('mailer-2', '{emails}');
SELECT consumer, max_attempts AS default_attempts FROM idem.outbox_consumers WHERE consumer LIKE 'mailer%' ORDER BY 1;
CREATE TABLE sent (event_id bigint, consumer text);
SELECT emit_as('m1', 't-m', 'emails', '{"to":"a@example.com"}') AS m1;
SELECT idem.consume_once('mailer', ev('m1')) AS first;
SELECT idem.consume_once('mailer', ev('m1')) AS second;
SELECT idem.consume_once('mailer-2', ev('m1')) AS other_consumer;
BEGIN;
SELECT emit_as('m2', 't-m', 'emails', '{"to":"b@example.com"}') AS m2;
COMMIT;
BEGIN;
SELECT idem.consume_once('mailer', ev('m2')) AS in_rolled_back_transaction;
ROLLBACK;
SELECT * FROM take('f1', 'mailer');
-- The effect and consume_once in one transaction, fenced by the token; then ack.
BEGIN;
INSERT INTO sent SELECT c.event_id, 'mailer' FROM claims c WHERE c.label = 'f1' AND idem.consume_once('mailer', c.event_id, c.token);
SELECT idem.ack('mailer', ARRAY(SELECT event_id FROM claims WHERE label = 'f1'), tok('f1')) AS acked;
COMMIT;
SELECT e.name, s.consumer FROM sent s JOIN ev e USING (event_id) ORDER BY 1;
SELECT e.name, k.consumer FROM idem.outbox_consumed k JOIN ev e USING (event_id) ORDER BY 1, 2;
SELECT emit_as('m3', 't-m', 'emails', '{"to":"c@example.com"}') AS m3;
SELECT outbox_state() AS s0 \gset
-- A token refuses once its claim is acked, and a wrong one always (bug: both passed while the
-- group had no open claim).
SELECT outbox_error($$SELECT idem.consume_once('mailer', ev('m2'), tok('f1'))$$) AS after_ack;
SELECT outbox_error($$SELECT idem.consume_once('mailer', ev('m2'), '00000000-0000-4000-8000-000000000000')$$) AS wrong_token;
SELECT outbox_error($$SELECT idem.consume_once('mailer', ev('m3'), tok('f1'))$$) AS unclaimed_event_stale_token;
SELECT outbox_error($$SELECT idem.consume_once('nobody', ev('m2'))$$) AS unknown_consumer;
SELECT outbox_error($$SELECT idem.consume_once('mailer', 999999)$$) AS unknown_event;
SELECT outbox_error($$SELECT idem.consume_once('mailer', NULL)$$) AS null_event;
SELECT error_hint($$SELECT idem.consume_once('mailer', ev('m2'), tok('f1'))$$) AS hint;
SELECT outbox_error($$SELECT idem.consume_once('mailer', ev('e1'))$$) AS other_topic;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;

--
-- outbox_lag: per consumer and topic, committed events not yet acked, claimed and retrying
-- groups, open dead letters.
--
SELECT idem.create_topic('ledger');
SELECT idem.create_consumer('books-a', '{ledger}');
SELECT idem.create_consumer('books-b', '{ledger}');
CREATE VIEW lag AS
  SELECT consumer, topic, backlog, oldest_unacked_age IS NOT NULL AS has_age, oldest_unacked_age >= '0' AS age_ok,
         claimed_groups, retrying_groups, dead_letters
    FROM idem.outbox_lag ORDER BY consumer, topic;
SELECT * FROM lag;
SELECT emit_as('l1', 't-l', 'ledger', '{"entry":1}') AS l1;
SELECT emit_as('l2', 't-l', 'ledger', '{"entry":2}') AS l2;
SELECT emit_as('l3', 't-l', 'ledger', '{"entry":3}') AS l3;
SELECT emit_as('l4', 't-l2', 'ledger', '{"entry":4}') AS l4;
BEGIN;
SELECT emit_as('l-uncommitted', 't-l', 'ledger', '{}') > 0 AS emitted;
SELECT backlog AS backlog_counts_committed_only FROM idem.outbox_lag WHERE consumer = 'books-a';
ROLLBACK;
SELECT * FROM lag WHERE topic = 'ledger';
SELECT * FROM take('la1', 'books-a', 2);
SELECT * FROM lag WHERE topic = 'ledger';
SELECT idem.ack('books-a', ev('l1'), tok('la1'));
SELECT * FROM lag WHERE topic = 'ledger';
SELECT idem.ack('books-a', ev('l2'), tok('la1'));
SELECT * FROM take('la2', 'books-a');
SELECT idem.ack('books-a', ARRAY[ev('l3'), ev('l4')], tok('la2')) AS acked;
SELECT * FROM take('lb1', 'books-b', 1);
SELECT idem.ack('books-b', ev('l1'), tok('lb1'));
SELECT * FROM take('lb2', 'books-b', 1, p_topics => '{ledger}');
SELECT idem.ack('books-b', ev('l4'), tok('lb2'));
SELECT * FROM lag WHERE topic = 'ledger';
-- The other consumers: nothing left but refunder's retrying group (t-r2), mailer's m3 and
-- mailer-2's three events (it never claimed; m1 was consume_once'd, but only acks count).
SELECT * FROM lag WHERE topic <> 'ledger';

--
-- purge_outbox: deletes whole transactions every consumer of the topic has acked to their last
-- event and that committed more than older_than ago, with their commit and consume_once rows; a
-- consumer that never claimed a group has acked nothing of it; an open dead letter's transaction
-- stays.
--
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.purge_outbox(NULL)$$) AS null_age;
SELECT outbox_error($$SELECT idem.purge_outbox('-1 second')$$) AS negative_age;
SELECT outbox_error($$SELECT idem.purge_outbox('0', 0)$$) AS zero_batch;
SELECT outbox_error($$SELECT idem.purge_outbox('0', 100001)$$) AS huge_batch;
SELECT outbox_error($$SELECT idem.purge_outbox('0', NULL)$$) AS null_batch;
-- Only in READ COMMITTED: an older snapshot could miss a consumer created a moment ago, and
-- purge what it has not acked.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT outbox_error($$SELECT idem.purge_outbox('0')$$) AS repeatable_read;
SELECT error_hint($$SELECT idem.purge_outbox('0')$$) AS hint;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT outbox_error($$SELECT idem.purge_outbox('0')$$) AS serializable;
COMMIT;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT idem.consume_once('books-a', ev('l1')) AS applied_l1;
SELECT idem.purge_outbox() AS purged_older_than_7_days;
SELECT idem.purge_outbox('1 hour') AS purged_older_than_1_hour;
SELECT * FROM outbox_rows;
-- Everything committed less than an hour ago: nothing is purged, acked or not.
SELECT e.name AS purged_ledger_events FROM ev e WHERE e.name LIKE 'l_' AND NOT EXISTS (SELECT 1 FROM idem.outbox_events x WHERE x.event_id = e.event_id) ORDER BY 1;
SELECT * FROM take('lb3', 'books-b', 1);
SELECT idem.ack('books-b', ev('l2'), tok('lb3'));
SELECT idem.purge_outbox('0', batch => 1) AS purged_batch_of_one;
SELECT e.name AS purged_events FROM ev e WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_events x WHERE x.event_id = e.event_id) ORDER BY 1;
SELECT count(*) AS consumed_rows_of_l1 FROM idem.outbox_consumed WHERE event_id = ev('l1');
SELECT idem.purge_outbox('0') AS purged;
SELECT e.name, k.consumer AS consume_once_rows_kept FROM idem.outbox_consumed k JOIN ev e USING (event_id) ORDER BY 1, 2;
SELECT e.name AS kept_events FROM ev e JOIN idem.outbox_events x USING (event_id) ORDER BY x.event_id;
-- What is kept, and why: l3 (books-b has not acked it), r3 (retrying, never acked), m1 to m3
-- (mailer-2 never claimed); everything else was acked by every consumer of its topic. Commit rows
-- go with their transactions' events.
SELECT count(*) AS commits_without_events FROM idem.outbox_commits m
 WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_events e WHERE e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id);
SELECT count(*) AS events_without_commit FROM idem.outbox_events e
 WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_commits m WHERE e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id);
-- A purged event is unknown to ack and consume_once.
SELECT outbox_error($$SELECT idem.consume_once('books-a', ev('l1'))$$) AS purged_event;
SELECT outbox_error($$SELECT idem.ack('books-a', ev('l1'), tok('la1'))$$) AS purged_event;
-- A new consumer of the topic gets every event retained, from the oldest; until it acks, purge
-- keeps them.
SELECT idem.create_consumer('books-c', '{ledger}');
SELECT * FROM take('lc1', 'books-c');
SELECT idem.ack('books-b', ev('l3'), (SELECT token FROM idem.claim('books-b', batch => 1)));
SELECT idem.purge_outbox('0') AS purged_while_books_c_has_not_acked;

-- A transaction is purged only once its last event is acked: an ack that stopped inside it
-- keeps all of it.
SELECT idem.create_topic('receipts');
SELECT idem.create_consumer('archiver', '{receipts}');
BEGIN;
SELECT emit_as('k1', 't-k', 'receipts', '{"k":1}') AS k1;
SELECT emit_as('k2', 't-k', 'receipts', '{"k":2}') AS k2;
COMMIT;
SELECT * FROM take('ka', 'archiver', 1);
SELECT idem.ack('archiver', ev('k1'), tok('ka'));
SELECT idem.purge_outbox('0') AS purged_with_k2_unacked;
SELECT * FROM take('kb', 'archiver');
SELECT idem.ack('archiver', ev('k2'), tok('kb'));
SELECT idem.purge_outbox('0') AS purged_once_k2_acked;
SELECT e.name, x.event_id IS NOT NULL AS event_kept FROM ev e LEFT JOIN idem.outbox_events x USING (event_id)
 WHERE e.name LIKE 'k_' ORDER BY 1;

-- Bug regression: purge deleted the event of an open dead letter once the group had moved past
-- it; its replay was then handed out on every claim and could never be acked, nacked or
-- consume_once'd (ERR_OUTBOX_EVENT_UNKNOWN). Fixed: a transaction with an open dead letter stays.
SELECT idem.create_topic('alerts');
SELECT idem.create_consumer('pager', '{alerts}', max_attempts => 1);
SELECT emit_as('a1', 't-a', 'alerts', '{"alert":1}') AS a1;
SELECT emit_as('a2', 't-a', 'alerts', '{"alert":2}') AS a2;
SELECT * FROM take('p1', 'pager', 1);
SELECT idem.nack('pager', ev('a1'), tok('p1'), 'pager service down') AS outcome;
SELECT * FROM lag WHERE consumer = 'pager';
SELECT * FROM take('p2', 'pager');
SELECT idem.ack('pager', ev('a2'), tok('p2'));
SELECT idem.consume_once('pager', ev('a1')) AS a1_applied_before_failing;
SELECT emit_as('a3', 't-a', 'alerts', '{"alert":3}') AS a3;
SELECT * FROM take('p3', 'pager');
SELECT idem.ack('pager', ev('a3'), tok('p3'));
SELECT idem.purge_outbox('0') AS purged;
SELECT e.name, x.event_id IS NOT NULL AS event_kept FROM ev e LEFT JOIN idem.outbox_events x USING (event_id)
 WHERE e.name LIKE 'a_' ORDER BY 1;
SELECT idem.outbox_replay('pager', ev('a1'));
SELECT * FROM take('p4', 'pager');
SELECT idem.consume_once('pager', ev('a1'), tok('p4')) AS applied_again;  -- no: its row was kept
SELECT idem.ack('pager', ev('a1'), tok('p4')) AS acked;
SELECT * FROM lag WHERE consumer = 'pager';
SELECT idem.purge_outbox('0') AS purged_once_resolved;
SELECT e.name, x.event_id IS NOT NULL AS event_kept FROM ev e LEFT JOIN idem.outbox_events x USING (event_id)
 WHERE e.name LIKE 'a_' ORDER BY 1;

-- Two dead letters of one group, one of them replayed: acking both under the replay's token is
-- refused as a whole (the other is not claimed for replay), and changes nothing.
SELECT emit_as('b1', 't-b', 'alerts', '{"alert":"b1"}') AS b1;
SELECT emit_as('b2', 't-b', 'alerts', '{"alert":"b2"}') AS b2;
SELECT * FROM take('q1', 'pager', 1);
SELECT idem.nack('pager', ev('b1'), tok('q1'), 'pager service down') AS outcome;
SELECT * FROM take('q2', 'pager', 1);
SELECT idem.nack('pager', ev('b2'), tok('q2'), 'pager service down') AS outcome;
SELECT idem.outbox_replay('pager', ev('b1'));
-- A replay claim whose visibility passed no longer stops a replay: asking again takes it back
-- from q3, whose ack is refused, and the next claim hands it out again.
SELECT * FROM take('q3', 'pager', p_visibility => '1 millisecond');
SELECT pg_sleep(0.01);
SELECT idem.outbox_replay('pager', ev('b1'));
SELECT outbox_error($$SELECT idem.ack('pager', ev('b1'), tok('q3'))$$) AS ack_replay_taken_back;
SELECT * FROM take('q4', 'pager');
SELECT outbox_state() AS s0 \gset
SELECT outbox_error($$SELECT idem.ack('pager', ARRAY[ev('b1'), ev('b2')], tok('q4'))$$) AS with_unreplayed_dead_letter;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SELECT idem.ack('pager', ev('b1'), tok('q4'));
SELECT idem.outbox_discard('pager', ev('b2'), 'duplicate alert');
SELECT e.name, d.attempts, d.resolution FROM idem.outbox_dead_letters d JOIN ev e USING (event_id)
 WHERE d.consumer = 'pager' ORDER BY 1;

--
-- The sequencing runs at COMMIT (and PREPARE), after every deferred trigger: a transaction
-- callback, no longer a deferred constraint trigger of its own. SET CONSTRAINTS ALL IMMEDIATE
-- does not move it (it used to: the position was drawn at the emit, and the group's lock held
-- from there to the transaction's end), and an emit from a user's deferred trigger, which fires
-- at COMMIT, is sequenced with the transaction's other events, its group locked in the same
-- global order as theirs. (Writers that would deadlock, or wait for each other, are in the
-- isolation specs outbox_no_deadlock_at_commit and outbox_late_commit_delivered_in_commit_order.)
--
SELECT idem.create_topic('stock');
SELECT idem.create_consumer('warehouse', '{stock}');
BEGIN;
SELECT emit_as('st1', 't-st', 'stock', '{"sku":"s-1"}') AS st1;
SET CONSTRAINTS ALL IMMEDIATE;
SELECT emit_as('st2', 't-st', 'stock', '{"sku":"s-2"}') AS st2;
SELECT count(*) AS commits_inside FROM idem.outbox_commits WHERE tenant_id = 't-st';
COMMIT;
CREATE TABLE stock_moves (tenant text, sku text PRIMARY KEY, qty integer NOT NULL);
CREATE FUNCTION stock_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM emit_as('st-' || NEW.sku, NEW.tenant, 'stock', jsonb_build_object('sku', NEW.sku, 'qty', NEW.qty));
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER stock_moved AFTER INSERT ON stock_moves DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION stock_moved();
-- The trigger's emit is the transaction's only one: it runs at COMMIT, so nothing is there before.
BEGIN;
INSERT INTO stock_moves VALUES ('t-st', 's-3', 1);
SELECT count(*) AS events_before_commit FROM idem.outbox_events WHERE tenant_id = 't-st' AND payload ->> 'sku' = 's-3';
COMMIT;
-- Beside an emit of the transaction, into a second group: both groups sequenced, one txn_id.
BEGIN;
SELECT emit_as('st4', 't-st', 'stock', '{"sku":"s-4"}') AS st4;
INSERT INTO stock_moves VALUES ('t-st2', 's-5', 2);
COMMIT;
SELECT m.tenant_id, m.position, array_agg(e.name ORDER BY x.event_id) AS events,
       dense_rank() OVER (ORDER BY m.txn_id) AS txn
  FROM idem.outbox_commits m JOIN idem.outbox_events x USING (tenant_id, topic, txn_id) JOIN ev e ON e.event_id = x.event_id
 WHERE m.topic = 'stock' GROUP BY m.tenant_id, m.position, m.txn_id ORDER BY m.position;
SELECT * FROM take('wh1', 'warehouse');
SELECT idem.ack('warehouse', ARRAY(SELECT event_id FROM claims WHERE label = 'wh1'), tok('wh1')) AS acked;
DROP TABLE stock_moves;
DROP FUNCTION stock_moved();

--
-- A transaction's outbox id (txn_id) is never reused: it comes from idem.outbox_txn_seq, which a
-- dump carries with the data. (Bug: events carried the emitting transaction's xid8; restored
-- into a new cluster, a new transaction could have the xid of a restored one, and its events
-- joined that transaction's old commit row, at a position consumers had passed: never
-- delivered.) Simulated here: the rows of two "restored" transactions, with ids below the
-- sequence's value, written as a restore writes them; then new transactions emit to the group:
-- each gets its own commit row, after the restored ones, and everything is claimed in order.
--
SELECT idem.create_topic('restored');
SELECT idem.create_consumer('restorer', '{restored}');
SELECT nextval('idem.outbox_txn_seq') AS txn_mark \gset
INSERT INTO idem.outbox_events (tenant_id, topic, txn_id, event_id, key, payload, emitted_at)
  VALUES ('t-re', 'restored', :txn_mark - 2, nextval('idem.outbox_seq'), NULL, '{"restored":"re1"}', now() - interval '2 days'),
         ('t-re', 'restored', :txn_mark - 1, nextval('idem.outbox_seq'), NULL, '{"restored":"re2"}', now() - interval '1 day');
INSERT INTO idem.outbox_commits (tenant_id, topic, position, txn_id, committed_at)
  VALUES ('t-re', 'restored', nextval('idem.outbox_seq'), :txn_mark - 2, now() - interval '2 days'),
         ('t-re', 'restored', nextval('idem.outbox_seq'), :txn_mark - 1, now() - interval '1 day');
INSERT INTO ev SELECT payload ->> 'restored', event_id FROM idem.outbox_events WHERE payload ? 'restored';
INSERT INTO idem.outbox_groups (tenant_id, topic) VALUES ('t-re', 'restored');
-- (pg_dump carries the sequence's value with the data: it is one of the extension's dumped
-- configuration relations.)
SELECT 'idem.outbox_txn_seq'::regclass = ANY (extconfig) AS txn_seq_dumped FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT emit_as('re3', 't-re', 'restored', '{"n":3}') AS re3;
BEGIN;
SELECT emit_as('re4', 't-re', 'restored', '{"n":4}') AS re4;
SELECT emit_as('re5', 't-re', 'restored', '{"n":5}') AS re5;
COMMIT;
SELECT m.txn_id - :txn_mark AS txn_after_mark, array_agg(e.name ORDER BY x.event_id) AS events
  FROM idem.outbox_commits m JOIN idem.outbox_events x USING (tenant_id, topic, txn_id) JOIN ev e ON e.event_id = x.event_id
 WHERE m.tenant_id = 't-re' GROUP BY m.position, m.txn_id ORDER BY m.position;
SELECT * FROM take('re', 'restorer');
SELECT idem.ack('restorer', ARRAY(SELECT event_id FROM claims WHERE label = 're'), tok('re')) AS acked;

-- Rows not written by idem.emit get no commit row. An INSERT into idem.outbox_events (only the
-- owner may write it) is never sequenced, with a fresh txn_id in a transaction that emits nothing
-- or beside an emit of its own: never delivered, never counted as backlog, never purged (it is
-- part of no commit). emit is the only way into the outbox.
BEGIN;
INSERT INTO idem.outbox_events (tenant_id, topic, txn_id, event_id, key, payload, emitted_at)
  VALUES ('t-re', 'restored', nextval('idem.outbox_txn_seq'), nextval('idem.outbox_seq'), NULL, '{"bypass":1}', clock_timestamp());
COMMIT;
BEGIN;
SELECT emit_as('re6', 't-re', 'restored', '{"n":6}') AS re6;
INSERT INTO idem.outbox_events (tenant_id, topic, txn_id, event_id, key, payload, emitted_at)
  VALUES ('t-re', 'restored', nextval('idem.outbox_txn_seq'), nextval('idem.outbox_seq'), NULL, '{"bypass":2}', clock_timestamp());
COMMIT;
SELECT x.payload, m.position IS NOT NULL AS sequenced
  FROM idem.outbox_events x LEFT JOIN idem.outbox_commits m USING (tenant_id, topic, txn_id)
 WHERE x.tenant_id = 't-re' AND (x.payload ? 'bypass' OR x.payload = '{"n":6}') ORDER BY x.event_id;
SELECT backlog FROM idem.outbox_lag WHERE consumer = 'restorer';
SELECT * FROM take('re-2', 'restorer');
SELECT idem.ack('restorer', ev('re6'), tok('re-2'));
SELECT backlog FROM idem.outbox_lag WHERE consumer = 'restorer';
SELECT * FROM take('re-3', 'restorer');
DELETE FROM idem.outbox_events WHERE payload ? 'bypass';

--
-- Privileges: a service (idem_service) emits and reads the lag; a consumer (idem_consumer)
-- claims, acks, nacks and consume_once's, and reads the lag. Neither can do what the other does
-- (bug: idem_service could claim, ack and mark as applied another service's events), write or
-- read the outbox tables, draw from its sequences, register topics or consumers, replay, discard
-- or purge, or call the internal functions. An operator registers and resolves.
--
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_outbox_svc;
DROP ROLE IF EXISTS regress_outbox_con;
DROP ROLE IF EXISTS regress_outbox_op;
RESET client_min_messages;
CREATE ROLE regress_outbox_svc NOLOGIN IN ROLE idem_service;
CREATE ROLE regress_outbox_con NOLOGIN IN ROLE idem_consumer;
CREATE ROLE regress_outbox_op NOLOGIN IN ROLE idem_operator;
GRANT ALL ON ev, claims, sent TO regress_outbox_svc, regress_outbox_con;
SELECT f.fn, r.rolname, has_function_privilege(r.rolname, f.fn, 'EXECUTE') AS can_execute
  FROM (VALUES ('regress_outbox_svc'), ('regress_outbox_con'), ('regress_outbox_op')) AS r(rolname)
 CROSS JOIN (VALUES ('idem.emit(text,text,jsonb,text)'), ('idem.claim(text,text[],integer,interval)'),
                    ('idem.ack(text,bigint,uuid)'), ('idem.ack(text,bigint[],uuid)'),
                    ('idem.nack(text,bigint,uuid,text,interval)'), ('idem.consume_once(text,bigint,uuid)'),
                    ('idem.create_topic(text,text)'), ('idem.create_consumer(text,text[],integer)'),
                    ('idem.outbox_replay(text,bigint)'), ('idem.outbox_discard(text,bigint,text)'),
                    ('idem.purge_outbox(interval,integer)')) AS f(fn)
 ORDER BY f.fn, r.rolname;
SELECT r.rolname, has_table_privilege(r.rolname, 'idem.outbox_lag', 'SELECT') AS reads_lag,
       has_sequence_privilege(r.rolname, 'idem.outbox_seq', 'USAGE') AS draws_positions,
       has_sequence_privilege(r.rolname, 'idem.outbox_txn_seq', 'USAGE') AS draws_txn_ids
  FROM (VALUES ('regress_outbox_svc'), ('regress_outbox_con'), ('regress_outbox_op')) AS r(rolname) ORDER BY 1;
-- No internal outbox function (idem._outbox*), whatever their number and signatures, is open to
-- any of the roles (or to PUBLIC).
SELECT r.rolname, count(*) > 0 AS internals_exist,
       count(*) FILTER (WHERE has_function_privilege(r.rolname, p.oid, 'EXECUTE')) AS internals_executable
  FROM (VALUES ('regress_outbox_svc'), ('regress_outbox_con'), ('regress_outbox_op'), ('public')) AS r(rolname)
 CROSS JOIN pg_proc p
 WHERE p.pronamespace = 'idem'::regnamespace AND p.proname LIKE '\_outbox%'
 GROUP BY r.rolname ORDER BY r.rolname;
SET ROLE regress_outbox_op;
SELECT idem.create_topic('svc-topic') AS created;
SELECT idem.create_consumer('svc-consumer', '{svc-topic}');
RESET ROLE;
-- The service emits; it cannot claim (nor consume_once, ack or nack, tried below with a real
-- claim's token).
SET ROLE regress_outbox_svc;
SELECT emit_as('v1', 't-v', 'svc-topic', '{"v":1}') > 0 AS emitted;
SELECT outbox_error($$SELECT * FROM idem.claim('svc-consumer')$$) AS svc_claim;
SELECT consumer, topic, backlog FROM idem.outbox_lag WHERE consumer = 'svc-consumer';
RESET ROLE;
SELECT * FROM cursor_of('svc-consumer', 't-v', 'svc-topic');  -- the refused claim left nothing
-- The consumer claims; it cannot emit.
SET ROLE regress_outbox_con;
SELECT * FROM take('v1', 'svc-consumer');
SELECT outbox_error($$SELECT idem.emit('t-v', 'svc-topic', '{"v":2}')$$) AS con_emit;
RESET ROLE;
SELECT outbox_state() AS s0 \gset
SET ROLE regress_outbox_svc;
SELECT outbox_error($$SELECT idem.consume_once('svc-consumer', ev('v1'), tok('v1'))$$) AS svc_consume_once;
SELECT outbox_error($$SELECT idem.consume_once('svc-consumer', ev('v1'))$$) AS svc_consume_once_unfenced;
SELECT outbox_error($$SELECT idem.ack('svc-consumer', ARRAY[ev('v1')], tok('v1'))$$) AS svc_ack;
SELECT outbox_error($$SELECT idem.ack('svc-consumer', ev('v1'), tok('v1'))$$) AS svc_ack_single;
SELECT outbox_error($$SELECT idem.nack('svc-consumer', ev('v1'), tok('v1'), 'x')$$) AS svc_nack;
RESET ROLE;
SELECT outbox_state() = :'s0' AS unchanged, * FROM outbox_rows;
SET ROLE regress_outbox_con;
SELECT idem.consume_once('svc-consumer', ev('v1'), tok('v1')) AS applied;
SELECT idem.nack('svc-consumer', ev('v1'), tok('v1'), 'try later', '0') AS outcome;
SELECT * FROM take('v2', 'svc-consumer');
SELECT idem.ack('svc-consumer', ARRAY[ev('v1')], tok('v2')) AS acked;
SELECT idem.ack('svc-consumer', ev('v1'), tok('v2')) AS reacked_single;
SELECT consumer, topic, backlog FROM idem.outbox_lag WHERE consumer = 'svc-consumer';
RESET ROLE;
-- Neither role reaches the tables, the sequences, the operator's functions or the internals.
SET ROLE regress_outbox_svc;
SELECT outbox_error($$INSERT INTO idem.outbox_events VALUES ('t-v', 'svc-topic', 1, 1, NULL, '{}', now())$$) AS insert_event;
SELECT outbox_error($$SELECT count(*) FROM idem.outbox_events$$) AS read_events;
SELECT outbox_error($$UPDATE idem.outbox_cursors SET topic = topic$$) AS move_cursor;
SELECT outbox_error($$INSERT INTO idem.outbox_cursor_states SELECT * FROM idem.outbox_cursor_states$$) AS append_state;
SELECT outbox_error($$DELETE FROM idem.outbox_consumed$$) AS forget_effects;
SELECT outbox_error($$INSERT INTO idem.outbox_commits VALUES ('t-v', 'svc-topic', 1, 1, now())$$) AS insert_commit;
SELECT outbox_error($$SELECT nextval('idem.outbox_seq')$$) AS draw_position;
SELECT outbox_error($$SELECT nextval('idem.outbox_txn_seq')$$) AS draw_txn_id;
SELECT outbox_error($$SELECT idem.create_topic('svc-own-topic')$$) AS create_topic;
SELECT outbox_error($$SELECT idem.create_consumer('svc-own', '{svc-topic}')$$) AS create_consumer;
SELECT outbox_error($$SELECT idem.outbox_replay('svc-consumer', 1)$$) AS replay;
SELECT outbox_error($$SELECT idem.outbox_discard('svc-consumer', 1, 'x')$$) AS discard;
SELECT outbox_error($$SELECT idem.purge_outbox('0')$$) AS purge;
SELECT outbox_error($$SELECT idem._outbox_sequence_group('t-v', 'svc-topic', 1, false)$$) AS sequence_group;
SELECT outbox_error($$SELECT idem._outbox_note('t-v', 'svc-topic', NULL, '{}')$$) AS note;
RESET ROLE;
SET ROLE regress_outbox_con;
SELECT outbox_error($$SELECT count(*) FROM idem.outbox_events$$) AS read_events;
SELECT outbox_error($$DELETE FROM idem.outbox_consumed$$) AS forget_effects;
SELECT outbox_error($$INSERT INTO idem.outbox_cursor_states SELECT * FROM idem.outbox_cursor_states$$) AS append_state;
SELECT outbox_error($$SELECT nextval('idem.outbox_txn_seq')$$) AS draw_txn_id;
SELECT outbox_error($$SELECT idem.create_consumer('con-own', '{svc-topic}')$$) AS create_consumer;
SELECT outbox_error($$SELECT idem.outbox_replay('svc-consumer', 1)$$) AS replay;
SELECT outbox_error($$SELECT idem.purge_outbox('0')$$) AS purge;
SELECT outbox_error($$SELECT idem._outbox_lock('t-v', 'svc-consumer', 'svc-topic', 'wait')$$) AS lock_state;
SELECT outbox_error($$SELECT idem._outbox_newest_state('t-v', 'svc-consumer', 'svc-topic')$$) AS newest_state;
RESET ROLE;
SELECT count(*) AS own_topics FROM idem.outbox_topics WHERE topic LIKE 'svc-own%';
SELECT count(*) AS own_consumers FROM idem.outbox_consumers WHERE consumer IN ('svc-own', 'con-own');
REVOKE ALL ON ev, claims, sent FROM regress_outbox_svc, regress_outbox_con;
DROP ROLE regress_outbox_svc;
DROP ROLE regress_outbox_con;
DROP ROLE regress_outbox_op;

-- A replay whose claim runs out without an ack failed, like a nack of it: the letter is dead
-- again (attempts counted, the expiry as its last error) instead of being handed out for ever;
-- and a dead letter being replayed cannot be discarded under the worker applying it.
SELECT idem.create_topic('replays') AS created;
SELECT idem.create_consumer('replayer', '{replays}', 2);
SELECT idem.emit('t-rx', 'replays', '{"n":1}') AS rx1 \gset
SELECT token AS rxt FROM idem.claim('replayer') \gset
SELECT idem.nack('replayer', :rx1, :'rxt', 'boom', '0') AS first_nack;
SELECT token AS rxt FROM idem.claim('replayer') \gset
SELECT idem.nack('replayer', :rx1, :'rxt', 'boom', '0') AS second_nack;
SELECT idem.outbox_replay('replayer', :rx1);
SELECT attempt, redelivered FROM idem.claim('replayer', NULL, 10, '300 milliseconds');
SELECT outbox_error(format($$SELECT idem.outbox_discard('replayer', %s, 'no')$$, :rx1)) AS discard_while_claimed;
SELECT pg_sleep(0.35);
SELECT count(*) AS handed_out_again FROM idem.claim('replayer', NULL, 10, '1 millisecond');
SELECT attempts, replay_requested_at IS NULL AS dead_again, resolved_at IS NULL AS open,
       last_error ~ '^replay claim expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z without an ack$' AS expiry_recorded
  FROM idem.outbox_dead_letters WHERE consumer = 'replayer';
SELECT idem.outbox_discard('replayer', :rx1, 'the order was refunded by hand');
SELECT resolution, resolution_note FROM idem.outbox_dead_letters WHERE consumer = 'replayer';

-- Order is never silently broken: with idem.outbox_seq moved back, the emitting COMMIT fails
-- (ERR_INTERNAL, naming the fix) and leaves nothing, instead of filing the event behind the
-- consumers' cursors.
SELECT last_value AS seq_before FROM idem.outbox_seq \gset
SELECT setval('idem.outbox_seq', 1) AS moved_back;
SELECT idem.emit('t-rx', 'replays', '{"late":true}');
SELECT setval('idem.outbox_seq', :seq_before) = :seq_before AS restored;
SELECT count(*) AS late_events FROM idem.outbox_events WHERE payload ? 'late';

-- The labels of the outbox's public functions (volatility, strictness, SECURITY DEFINER, parallel
-- safety, pinned settings).
SELECT p.oid::regprocedure AS function, p.provolatile AS vol, p.proisstrict AS strict, p.prosecdef AS secdef,
       p.proparallel AS par, array_to_string(p.proconfig, ', ') AS config
  FROM pg_proc p
 WHERE p.pronamespace = 'idem'::regnamespace
   AND p.proname IN ('emit', 'claim', 'ack', 'nack', 'consume_once', 'create_topic', 'create_consumer',
                     'outbox_replay', 'outbox_discard', 'purge_outbox')
 ORDER BY p.proname, p.oid::regprocedure::text;

DROP VIEW lag;
DROP VIEW outbox_rows;
DROP FUNCTION cursor_of(text, text, text), outbox_state(), outbox_error(text), tok(text),
              take(text, text, integer, interval, text[]), emit_as(text, text, text, jsonb, text), ev(text);
DROP TABLE ev, claims, sent;
