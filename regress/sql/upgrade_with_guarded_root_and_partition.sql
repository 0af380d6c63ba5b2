-- Review of 0.3.5 (d73c24e): the 0.3.5 update registers every table a 0.3.4 guard trigger was
-- created on (tgparentid = 0), then creates each one's log trigger. A 0.3.4 database that guards
-- a partitioned table and, with a trigger of its own, one of its partitions: the root's log
-- trigger is cloned onto the partition first, and CREATE OR REPLACE TRIGGER _idem_log_status on
-- the partition then fails ("is an internal or a child trigger"): ALTER EXTENSION UPDATE fails
-- as a whole. (register_machine_table on such a partition fails the same way.)
-- Expected: the update succeeds; the partition keeps the log trigger cloned from the root, and
-- a write through either guard is logged once.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_upgrade_root_partition;
\c idem_upgrade_root_partition
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '0.3.4';
RESET client_min_messages;
CREATE TABLE orders (order_id text NOT NULL, tenant_id text NOT NULL, status text NOT NULL, region text NOT NULL)
  PARTITION BY LIST (region);
CREATE TABLE orders_eu PARTITION OF orders FOR VALUES IN ('eu');
CREATE TABLE orders_us PARTITION OF orders FOR VALUES IN ('us');
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE ON orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
CREATE TRIGGER orders_eu_status BEFORE INSERT OR UPDATE ON orders_eu
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
ALTER EXTENSION pg_idempotency UPDATE TO '0.3.5';
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT table_name, status_column FROM idem.machine_tables ORDER BY table_name;
INSERT INTO orders VALUES ('ord-eu', 'acme', 'created', 'eu'), ('ord-us', 'acme', 'created', 'us');
SELECT row_key, from_state, to_state, outcome FROM idem.transition_log ORDER BY log_id;
\c :regress_db
DROP DATABASE idem_upgrade_root_partition;
