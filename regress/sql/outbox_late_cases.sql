-- The transactional outbox, continued from outbox_privileges.sql (the helpers and the events so far come from
-- there; regress/schedule runs these files in order, in one database): a replay that expires, a sequence moved back, the functions' labels; drops the helpers.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session

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
