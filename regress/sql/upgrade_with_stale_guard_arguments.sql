-- Review of 0.3.5 (d73c24e): the 0.3.5 update registers each 0.3.4 guard trigger's table with
-- the trigger's arguments and creates the log trigger for the status column they name. A 0.3.4
-- guard whose status column was renamed since (trigger arguments are text and do not follow a
-- rename; that table's writes already failed in 0.3.4) makes the log trigger's CREATE TRIGGER
-- fail, and with it ALTER EXTENSION UPDATE for the whole database.
-- Expected: the update succeeds; the table with the stale guard is not registered (its guard
-- refuses writes until an operator registers it); the other guarded table is.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_upgrade_stale_guard;
\c idem_upgrade_stale_guard
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '0.3.4';
RESET client_min_messages;
CREATE TABLE orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE ON orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
CREATE TABLE renamed (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
CREATE TRIGGER renamed_status BEFORE INSERT OR UPDATE ON renamed
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
ALTER TABLE renamed RENAME COLUMN status TO state;
ALTER EXTENSION pg_idempotency UPDATE TO '0.3.5';
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT table_name, status_column FROM idem.machine_tables ORDER BY table_name;
INSERT INTO orders VALUES ('ord-1', 'acme', 'created');
SELECT row_key, from_state, to_state, outcome FROM idem.transition_log ORDER BY log_id;
\c :regress_db
DROP DATABASE idem_upgrade_stale_guard;
