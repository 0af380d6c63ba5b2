-- The transactional outbox, continued from outbox_claim_ack.sql (the helpers and the events so far come from
-- there; regress/schedule runs these files in order, in one database): nack and its backoff, expired claims taken over, dead letters, their replay and discard.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session

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
