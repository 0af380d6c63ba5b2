-- Bug regression (review of 0.3.4): idem.enforce_transitions writes idem.transition_log as its
-- owner, and any idem_service member could attach it to a table of its own. A role bound to
-- globex made transitions keyed ord_acme_1, and acme's auditor read them in
-- idem.order_trail('ord_acme_1') beside the real ones. Now only a table an operator registered
-- is guarded, each logged row carries the row's tenant, a bound session's writes of another
-- tenant's rows are refused, and the trail reads through row security.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS forger CASCADE;
DROP TABLE IF EXISTS shop_orders;
DROP ROLE IF EXISTS regress_ft_globex;
DROP ROLE IF EXISTS regress_ft_acme_aud;
DROP ROLE IF EXISTS regress_ft_globex_aud;
DROP ROLE IF EXISTS regress_ft_op;
RESET client_min_messages;
CREATE ROLE regress_ft_globex LOGIN IN ROLE idem_service;
CREATE ROLE regress_ft_acme_aud LOGIN IN ROLE idem_auditor;
CREATE ROLE regress_ft_globex_aud LOGIN IN ROLE idem_auditor;
CREATE ROLE regress_ft_op LOGIN IN ROLE idem_operator;
SELECT idem.bind_tenant('regress_ft_globex', 'globex'), idem.bind_tenant('regress_ft_acme_aud', 'acme'),
       idem.bind_tenant('regress_ft_globex_aud', 'globex');
CREATE SCHEMA forger AUTHORIZATION regress_ft_globex;
-- The real order of acme, on a registered table.
CREATE TABLE shop_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
GRANT SELECT, INSERT, UPDATE ON shop_orders TO regress_ft_globex;
CREATE TRIGGER shop_orders_status BEFORE INSERT OR UPDATE ON shop_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
\c - regress_ft_op
SELECT idem.register_machine_table('public.shop_orders', 'order', 'status', 'order_id', 'tenant_id');

\c - postgres
INSERT INTO shop_orders VALUES ('ord_acme_1', 'acme', 'created');
UPDATE shop_orders SET status = 'confirmed' WHERE order_id = 'ord_acme_1';

\c - regress_ft_globex
-- The attack of the review: its own table, the trigger attached, a row keyed ord_acme_1.
CREATE TABLE forger.orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE OF status ON forger.orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
SELECT expect_error($$INSERT INTO forger.orders VALUES ('ord_acme_1', 'globex', 'confirmed')$$) AS own_table_unregistered;
SELECT expect_error($$SELECT idem.register_machine_table('forger.orders', 'order', 'status', 'order_id', 'tenant_id')$$) AS service_cannot_register;
SELECT expect_error($$INSERT INTO idem.machine_tables VALUES ('forger', 'orders', 'order', 'status', 'order_id', 'tenant_id', 'x', now())$$) AS registry_not_writable;
-- On the registered table: acme's row is not globex's to move, nor to create.
SELECT expect_error($$UPDATE shop_orders SET status = 'refunded' WHERE order_id = 'ord_acme_1'$$) AS move_other_tenants_row;
SELECT expect_error($$INSERT INTO shop_orders VALUES ('ord_acme_2', 'acme', 'created')$$) AS create_other_tenants_row;
-- Nor may it re-label a row to its own tenant while moving it.
SELECT expect_error($$UPDATE shop_orders SET tenant_id = 'globex', status = 'refunded' WHERE order_id = 'ord_acme_1'$$) AS relabel_other_tenants_row;
-- Its own rows go through, logged with its tenant.
INSERT INTO shop_orders VALUES ('ord_globex_1', 'globex', 'created');
UPDATE shop_orders SET status = 'cancelled' WHERE order_id = 'ord_globex_1';

\c - postgres
SELECT table_name, tenant_id, row_key, from_state, to_state, outcome FROM idem.transition_log
 WHERE row_key IN ('ord_acme_1', 'ord_acme_2', 'ord_globex_1') ORDER BY log_id;
SELECT order_id, tenant_id, status FROM shop_orders ORDER BY order_id;
\c - regress_ft_acme_aud
-- acme's auditor: acme's trail only, the table named with its schema.
SELECT source, what, detail->>'tenant_id' AS tenant, detail->>'table' AS tbl FROM idem.order_trail('ord_acme_1');
SELECT count(*) AS globex_rows_seen FROM idem.transition_log WHERE tenant_id <> 'acme';
\c - regress_ft_globex_aud
SELECT count(*) AS acme_trail_seen_by_globex FROM idem.order_trail('ord_acme_1');
SELECT what, detail->>'tenant_id' AS tenant FROM idem.order_trail('ord_globex_1');
\c - postgres
DROP SCHEMA forger CASCADE;
DROP TABLE shop_orders;
SELECT count(*) AS registration_dropped_with_its_table FROM idem.machine_tables WHERE table_name = 'shop_orders';
SELECT idem.unbind_tenant('regress_ft_globex', 'globex'), idem.unbind_tenant('regress_ft_acme_aud', 'acme'),
       idem.unbind_tenant('regress_ft_globex_aud', 'globex');
DROP ROLE regress_ft_globex, regress_ft_acme_aud, regress_ft_globex_aud, regress_ft_op;
