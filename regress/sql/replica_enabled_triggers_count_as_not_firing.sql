-- Review of 0.3.5 (d73c24e): "enabled" in the guard's and the log trigger's checks is
-- tgenabled <> 'D', but a trigger the table's owner set to ENABLE REPLICA TRIGGER does not fire
-- in an ordinary (origin) session either.
-- 1. A replica-only log trigger passes the guard's check, never fires: guarded writes go unlogged.
-- 2. A replica-only guard never fires, yet the log trigger counts it as fired: it logs the
--    unchecked created -> confirmed, with guard "stock available" held though it does not hold.
-- Expected: 1 refused like a disabled log trigger (ERR_ARGUMENT_INVALID); 2 logs nothing, as
-- for a disabled guard (nothing checked the write).
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS replica_orders;
RESET client_min_messages;
CREATE TABLE replica_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL,
                             stock_available boolean);
SELECT idem.register_machine_table('replica_orders', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER replica_orders_guard BEFORE INSERT OR UPDATE ON replica_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SHOW session_replication_role;
-- 1. The log trigger fires only on a replica.
ALTER TABLE replica_orders ENABLE REPLICA TRIGGER _idem_log_status;
INSERT INTO replica_orders VALUES ('ord_rp_1', 'acme', 'created');
SELECT count(*) AS ord_rp_1_logged FROM idem.transition_log WHERE relid = 'replica_orders'::regclass;
ALTER TABLE replica_orders ENABLE TRIGGER _idem_log_status;
-- 2. The guard fires only on a replica.
ALTER TABLE replica_orders ENABLE REPLICA TRIGGER replica_orders_guard;
INSERT INTO replica_orders VALUES ('ord_rp_2', 'acme', 'created', false);
UPDATE replica_orders SET status = 'confirmed' WHERE order_id = 'ord_rp_2';
ALTER TABLE replica_orders ENABLE TRIGGER replica_orders_guard;
SELECT order_id, status, stock_available FROM replica_orders ORDER BY order_id;
SELECT row_key, from_state, to_state, guard_name, guard_result, outcome FROM idem.transition_log
 WHERE relid = 'replica_orders'::regclass ORDER BY log_id;
DROP TABLE replica_orders;
