-- The transition log is written by the AFTER trigger idem.register_machine_table creates
-- (_idem_log_<status column>), once PostgreSQL wrote the row. A guard refuses to act without its
-- log trigger, and the log trigger logs only writes a guard checked: nothing is guarded unlogged,
-- or logged unguarded. Nobody else may create the log trigger.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS paired_orders;
DROP ROLE IF EXISTS regress_pair_svc;
RESET client_min_messages;
CREATE ROLE regress_pair_svc LOGIN IN ROLE idem_service;
CREATE TABLE paired_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL,
                            note text);
GRANT SELECT, INSERT, UPDATE ON paired_orders TO regress_pair_svc;
-- Registered, but no guard yet: nothing checks the write, so nothing logs it.
SELECT idem.register_machine_table('paired_orders', 'order', 'status', 'order_id', 'tenant_id');
SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'paired_orders'::regclass ORDER BY tgname;
INSERT INTO paired_orders VALUES ('ord_pair_0', 'acme', 'created');
SELECT count(*) AS ord_pair_0_logged FROM idem.transition_log WHERE row_key = 'ord_pair_0';
CREATE TRIGGER paired_orders_guard BEFORE INSERT OR UPDATE ON paired_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO paired_orders VALUES ('ord_pair_1', 'acme', 'created');
-- An upsert that updates logs the update, not the insert it did not make.
INSERT INTO paired_orders VALUES ('ord_pair_1', 'acme', 'created') ON CONFLICT (order_id) DO UPDATE SET status = 'confirmed';
-- A write that leaves the status logs nothing.
UPDATE paired_orders SET note = 'gift wrap';
UPDATE paired_orders SET status = 'confirmed';
SELECT row_key, from_state, to_state, outcome FROM idem.transition_log WHERE row_key = 'ord_pair_1' ORDER BY log_id;
-- The guard refuses to run without its log trigger, and the row stays.
DROP TRIGGER _idem_log_status ON paired_orders;
UPDATE paired_orders SET status = 'shipped' WHERE order_id = 'ord_pair_1';
ALTER TABLE paired_orders DISABLE TRIGGER paired_orders_guard;
INSERT INTO paired_orders VALUES ('ord_pair_2', 'acme', 'created');
ALTER TABLE paired_orders ENABLE TRIGGER paired_orders_guard;
SELECT order_id, status FROM paired_orders ORDER BY order_id;
-- The guard did not fire: nothing checked the write, nothing logged it.
SELECT count(*) AS ord_pair_2_logged FROM idem.transition_log WHERE row_key = 'ord_pair_2';
-- Registering again creates it again.
SELECT idem.register_machine_table('paired_orders', 'order', 'status', 'order_id', 'tenant_id');
-- A disabled log trigger is a missing one.
ALTER TABLE paired_orders DISABLE TRIGGER _idem_log_status;
UPDATE paired_orders SET status = 'refunded' WHERE order_id = 'ord_pair_1';
ALTER TABLE paired_orders ENABLE TRIGGER _idem_log_status;
-- A BEFORE trigger of the user's that fires after the guard and moves the status backwards is
-- caught when the row is logged; so is a guard whose WHEN clause skipped the row.
CREATE FUNCTION paired_orders_rewind() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.status := 'created'; RETURN NEW; END $$;
CREATE TRIGGER zz_rewind BEFORE UPDATE ON paired_orders FOR EACH ROW EXECUTE FUNCTION paired_orders_rewind();
UPDATE paired_orders SET status = 'refunded' WHERE order_id = 'ord_pair_1';
DROP TRIGGER zz_rewind ON paired_orders;
DROP FUNCTION paired_orders_rewind();
CREATE OR REPLACE TRIGGER paired_orders_guard BEFORE INSERT OR UPDATE ON paired_orders
  FOR EACH ROW WHEN (NEW.note IS NULL) EXECUTE FUNCTION idem.enforce_transitions();
UPDATE paired_orders SET status = 'created', note = 'skips the guard' WHERE order_id = 'ord_pair_1';
-- The tenant is checked again too: a role bound to globex past a skipped guard.
SELECT idem.bind_tenant('regress_pair_svc', 'globex');
\c - regress_pair_svc
UPDATE paired_orders SET status = 'cancelled', note = 'skips the guard' WHERE order_id = 'ord_pair_2';
\c - postgres
SELECT idem.unbind_tenant('regress_pair_svc', 'globex');
CREATE OR REPLACE TRIGGER paired_orders_guard BEFORE INSERT OR UPDATE ON paired_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SELECT order_id, status FROM paired_orders ORDER BY order_id;
UPDATE paired_orders SET status = 'shipped' WHERE order_id = 'ord_pair_1';
SELECT row_key, from_state, to_state, outcome FROM idem.transition_log WHERE row_key = 'ord_pair_1' ORDER BY log_id;
-- A service role cannot add a log trigger of its own (it would double or forge the log), and the
-- log trigger refuses to be anything but an AFTER row trigger with the status column.
CREATE SCHEMA regress_pair AUTHORIZATION regress_pair_svc;
\c - regress_pair_svc
CREATE TABLE regress_pair.own_orders (order_id text, tenant_id text, status text);
CREATE TRIGGER own_log AFTER INSERT OR UPDATE ON regress_pair.own_orders FOR EACH ROW EXECUTE FUNCTION idem._log_transitions('status');
\c - postgres
DROP SCHEMA regress_pair CASCADE;
CREATE TRIGGER wrong_log BEFORE INSERT ON paired_orders FOR EACH ROW EXECUTE FUNCTION idem._log_transitions('status');
INSERT INTO paired_orders VALUES ('ord_pair_3', 'acme', 'created');
DROP TRIGGER wrong_log ON paired_orders;
-- Unregistering drops the log trigger; the guard then refuses every write.
SELECT idem.unregister_machine_table('public', 'paired_orders');
SELECT tgname FROM pg_trigger WHERE tgrelid = 'paired_orders'::regclass ORDER BY tgname;
UPDATE paired_orders SET status = 'refunded' WHERE order_id = 'ord_pair_1';
DROP TABLE paired_orders;
DROP ROLE regress_pair_svc;
