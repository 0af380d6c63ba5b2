-- The transactional outbox, continued from outbox_dead_letters.sql (the helpers and the events so far come from
-- there; regress/schedule runs these files in order, in one database): consume_once and its fencing token, outbox_lag, purge_outbox and what it keeps.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session

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
