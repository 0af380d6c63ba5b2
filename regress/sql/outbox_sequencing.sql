-- The transactional outbox, continued from outbox_consume_lag_purge.sql (the helpers and the events so far come from
-- there; regress/schedule runs these files in order, in one database): the commit-time sequencing (deferred triggers, SET CONSTRAINTS), transaction outbox ids and restored rows, rows written past emit.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session

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
