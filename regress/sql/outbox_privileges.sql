-- The transactional outbox, continued from outbox_sequencing.sql (the helpers and the events so far come from
-- there; regress/schedule runs these files in order, in one database): what idem_service, idem_consumer and idem_operator may do, and what nobody may.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session

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

