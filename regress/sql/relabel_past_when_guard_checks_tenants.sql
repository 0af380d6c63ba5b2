-- Review of 0.3.5 (d73c24e): the log trigger checks the tenant again for a guard whose WHEN
-- clause skipped the row, but returns for an unchanged status before that check, and does not
-- fire for an UPDATE that leaves the status out of its SET list. A role bound to globex so
-- re-labels acme's order as globex's (status set to itself, or not named), then moves it on as
-- its own: acme's order ord_rl_1 ends up globex's, confirmed by globex, in the trail.
-- Now a guard with a WHEN clause is refused outright, and the log trigger checks the tenants of
-- every update when roles are bound (a BEFORE trigger firing after the guard may re-label).
-- Expected: each re-labelling fails with ERR_TENANT_FORBIDDEN and the row stays acme's.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS relabel_orders;
DROP ROLE IF EXISTS regress_rl_globex;
RESET client_min_messages;
CREATE ROLE regress_rl_globex LOGIN IN ROLE idem_service;
SELECT idem.bind_tenant('regress_rl_globex', 'globex');
CREATE TABLE relabel_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL, note text);
GRANT SELECT, INSERT, UPDATE ON relabel_orders TO regress_rl_globex;
SELECT idem.register_machine_table('relabel_orders', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER relabel_orders_guard BEFORE INSERT OR UPDATE ON relabel_orders
  FOR EACH ROW WHEN (NEW.note IS NULL) EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO relabel_orders VALUES ('ord_rl_1', 'acme', 'created'), ('ord_rl_2', 'acme', 'created');
CREATE OR REPLACE TRIGGER relabel_orders_guard BEFORE INSERT OR UPDATE ON relabel_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO relabel_orders VALUES ('ord_rl_1', 'acme', 'created'), ('ord_rl_2', 'acme', 'created');
-- A trigger of the table's owner that fires after the guard and re-labels a noted row.
CREATE FUNCTION relabel_orders_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF NEW.note IS NOT NULL THEN NEW.tenant_id := 'globex'; END IF; RETURN NEW; END $$;
CREATE TRIGGER zz_claim BEFORE UPDATE ON relabel_orders FOR EACH ROW EXECUTE FUNCTION relabel_orders_claim();
\c - regress_rl_globex
-- The status in the SET list, unchanged; then moved on.
UPDATE relabel_orders SET status = 'created', note = 'mine now' WHERE order_id = 'ord_rl_1';
UPDATE relabel_orders SET status = 'confirmed', note = 'mine now' WHERE order_id = 'ord_rl_1';
-- The status not in the SET list.
UPDATE relabel_orders SET note = 'mine now' WHERE order_id = 'ord_rl_2';
\c - postgres
SELECT order_id, tenant_id, status, note FROM relabel_orders ORDER BY order_id;
SELECT tenant_id, row_key, from_state, to_state, outcome FROM idem.transition_log
 WHERE relid = 'relabel_orders'::regclass ORDER BY log_id;
DROP TABLE relabel_orders;
DROP FUNCTION relabel_orders_claim();
DELETE FROM idem.machine_tables WHERE table_name = 'relabel_orders';
SELECT idem.unbind_tenant('regress_rl_globex', 'globex');
DROP ROLE regress_rl_globex;
