-- Review of 0.3.5 (d73c24e): register_machine_table creates the log trigger by name
-- (CREATE OR REPLACE TRIGGER _idem_log_<status>), and unregister_machine_table drops it by name.
-- The table's owner may rename the log trigger (ALTER TRIGGER needs only ownership); the guard
-- still accepts it. An operator registering the table again (to change its key column, say)
-- then adds a second log trigger: every transition is logged twice. Unregistering leaves the
-- renamed one on the table.
-- Expected: one log trigger per status column however it is named, one log row per transition,
-- and none left after unregistering.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS renamed_log_orders;
RESET client_min_messages;
CREATE TABLE renamed_log_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
SELECT idem.register_machine_table('renamed_log_orders', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER renamed_log_orders_guard BEFORE INSERT OR UPDATE ON renamed_log_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
ALTER TRIGGER _idem_log_status ON renamed_log_orders RENAME TO orders_audit;
SELECT idem.register_machine_table('renamed_log_orders', 'order', 'status', NULL, 'tenant_id');
SELECT count(*) AS log_triggers FROM pg_trigger
 WHERE tgrelid = 'renamed_log_orders'::regclass AND tgfoid = 'idem._log_transitions'::regproc;
INSERT INTO renamed_log_orders VALUES ('ord_rn_1', 'acme', 'created');
SELECT row_key, from_state, to_state, outcome FROM idem.transition_log
 WHERE relid = 'renamed_log_orders'::regclass ORDER BY log_id;
SELECT idem.unregister_machine_table('public', 'renamed_log_orders');
SELECT count(*) AS log_triggers FROM pg_trigger
 WHERE tgrelid = 'renamed_log_orders'::regclass AND tgfoid = 'idem._log_transitions'::regproc;
DROP TABLE renamed_log_orders;
