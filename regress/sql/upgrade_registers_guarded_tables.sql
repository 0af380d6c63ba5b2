-- 0.3.4 -> 0.3.5: idem.enforce_transitions acts only on registered tables. A table guarded before
-- the update keeps working when it has a tenant_id column (registered with its trigger's
-- arguments); one without refuses writes until an operator registers it. Transitions logged
-- before the update have no tenant: only unbound roles read them.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_upgrade_035;
\c idem_upgrade_035
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '0.3.4';
RESET client_min_messages;
CREATE TABLE orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE OF status ON orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
CREATE TABLE "Odd Name" (id text PRIMARY KEY, tenant_id text NOT NULL, "State" text NOT NULL);
CREATE TRIGGER odd_status BEFORE INSERT OR UPDATE ON "Odd Name"
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'State', 'id', 'skip');
CREATE TABLE untenanted (id text PRIMARY KEY, status text NOT NULL);
CREATE TRIGGER untenanted_status BEFORE INSERT OR UPDATE ON untenanted
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'id');
-- This library on the 0.3.4 schema refuses guarded writes, saying what to run (fail closed).
INSERT INTO orders VALUES ('ord-1', 'acme', 'created');
ALTER EXTENSION pg_idempotency UPDATE TO '0.3.5';
INSERT INTO orders VALUES ('ord-1', 'acme', 'created');
SELECT table_schema, table_name, machine, status_column, key_column, tenant_column FROM idem.machine_tables ORDER BY table_name;
UPDATE orders SET status = 'confirmed' WHERE order_id = 'ord-1';
INSERT INTO "Odd Name" VALUES ('odd-1', 'acme', 'created');
UPDATE "Odd Name" SET "State" = 'shipped';
INSERT INTO untenanted VALUES ('u-1', 'created');
SELECT table_name, tenant_id, row_key, from_state, to_state, outcome FROM idem.transition_log ORDER BY log_id;
\c :regress_db
DROP DATABASE idem_upgrade_035;
