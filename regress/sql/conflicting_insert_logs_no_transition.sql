-- Was a bug (review of 0.3.5; the same in 0.3.4): enforce_transitions, a BEFORE INSERT row
-- trigger, logged "(new) -> state, applied" before PostgreSQL checked the arbiter index, so an
-- INSERT ... ON CONFLICT DO NOTHING that inserted nothing still left an applied transition in
-- idem.transition_log. A role bound to globex, with INSERT on a registered table, so wrote
-- "(new) -> refunded" into the trail of acme's order ord_cf_1 (same table, same row key), and
-- an ordinary idempotent upsert of acme's own service recorded a creation that never happened.
-- Now the AFTER trigger register_machine_table creates writes the log.
-- Expected: a row that is not written logs no transition.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS conflict_orders;
DROP ROLE IF EXISTS regress_cf_globex;
RESET client_min_messages;
CREATE ROLE regress_cf_globex LOGIN IN ROLE idem_service;
SELECT idem.bind_tenant('regress_cf_globex', 'globex');
CREATE TABLE conflict_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
GRANT SELECT, INSERT, UPDATE ON conflict_orders TO regress_cf_globex;
CREATE TRIGGER conflict_orders_status BEFORE INSERT OR UPDATE ON conflict_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SELECT idem.register_machine_table('conflict_orders', 'order', 'status', 'order_id', 'tenant_id');
INSERT INTO conflict_orders VALUES ('ord_cf_1', 'acme', 'created');
UPDATE conflict_orders SET status = 'confirmed' WHERE order_id = 'ord_cf_1';
UPDATE conflict_orders SET status = 'shipped' WHERE order_id = 'ord_cf_1';
-- acme's own retry of the creation: nothing inserted.
INSERT INTO conflict_orders VALUES ('ord_cf_1', 'acme', 'created') ON CONFLICT (order_id) DO NOTHING;
\c - regress_cf_globex
INSERT INTO conflict_orders VALUES ('ord_cf_1', 'globex', 'refunded') ON CONFLICT DO NOTHING;
\c - postgres
SELECT order_id, tenant_id, status FROM conflict_orders;
SELECT tenant_id, row_key, from_state, to_state, outcome FROM idem.transition_log
 WHERE row_key = 'ord_cf_1' ORDER BY log_id;
DROP TABLE conflict_orders;
DELETE FROM idem.machine_tables WHERE table_name = 'conflict_orders';
SELECT idem.unbind_tenant('regress_cf_globex', 'globex');
DROP ROLE regress_cf_globex;
