-- The transactional outbox, continued from outbox.sql (the helpers and the events so far come from
-- there; regress/schedule runs these files in order, in one database): claim (each group's events in commit order, one claim at a time, batch limits) and ack (the acked prefix, re-acks).
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session

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
