-- Bug (review of 0.3.5): enforce_transitions checks the row's tenants (old and new) only when
-- the status changes: an UPDATE that leaves the status alone returns before the check. A role
-- bound to globex re-labels acme's order to globex (status unchanged: no check, no log row),
-- refunds it (the old tenant is globex now: allowed, logged as globex's), and gives it back to
-- acme. acme's order ends refunded and acme's trail stops at confirmed. The single-statement
-- re-label is refused (bound_service_cannot_forge_another_tenants_trail); the same in two steps
-- is not. Expected: every fired UPDATE of a row of another tenant is ERR_TENANT_FORBIDDEN.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS relabel_orders;
DROP ROLE IF EXISTS regress_rl_globex;
DROP ROLE IF EXISTS regress_rl_acme_aud;
RESET client_min_messages;
CREATE ROLE regress_rl_globex LOGIN IN ROLE idem_service;
CREATE ROLE regress_rl_acme_aud LOGIN IN ROLE idem_auditor;
SELECT idem.bind_tenant('regress_rl_globex', 'globex'), idem.bind_tenant('regress_rl_acme_aud', 'acme');
CREATE TABLE relabel_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
GRANT SELECT, INSERT, UPDATE ON relabel_orders TO regress_rl_globex;
CREATE TRIGGER relabel_orders_status BEFORE INSERT OR UPDATE ON relabel_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SELECT idem.register_machine_table('relabel_orders', 'order', 'status', 'order_id', 'tenant_id');
INSERT INTO relabel_orders VALUES ('ord_rl_acme_1', 'acme', 'created');
UPDATE relabel_orders SET status = 'confirmed' WHERE order_id = 'ord_rl_acme_1';

\c - regress_rl_globex
-- In one statement: refused.
UPDATE relabel_orders SET tenant_id = 'globex', status = 'refunded' WHERE order_id = 'ord_rl_acme_1';
-- In steps: the re-label must be refused as well (the row is acme's).
UPDATE relabel_orders SET tenant_id = 'globex' WHERE order_id = 'ord_rl_acme_1';
UPDATE relabel_orders SET status = 'refunded' WHERE order_id = 'ord_rl_acme_1';
UPDATE relabel_orders SET tenant_id = 'acme' WHERE order_id = 'ord_rl_acme_1';

\c - postgres
SELECT order_id, tenant_id, status FROM relabel_orders;
\c - regress_rl_acme_aud
-- acme's trail tells what happened to acme's order.
SELECT what, detail->>'tenant_id' AS tenant FROM idem.order_trail('ord_rl_acme_1');
\c - postgres
DROP TABLE relabel_orders;
DELETE FROM idem.machine_tables WHERE table_name = 'relabel_orders';
SELECT idem.unbind_tenant('regress_rl_globex', 'globex'), idem.unbind_tenant('regress_rl_acme_aud', 'acme');
DROP ROLE regress_rl_globex, regress_rl_acme_aud;
