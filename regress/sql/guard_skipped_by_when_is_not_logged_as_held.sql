-- Review of 0.3.5 (d73c24e): the log trigger re-checks the edge after a guard trigger whose WHEN
-- clause skipped the row, but not the edge's guard function: it logs guard_result = true for
-- every guarded edge "because the row was written". With the guard trigger skipped, created ->
-- confirmed goes through although "stock available" does not hold (the same UPDATE without the
-- note is refused), and the trail says the guard held.
-- Expected: the second UPDATE fails too (ERR_INVALID_TRANSITION); the trail never shows a guard
-- result that no guard computed.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS when_guard_orders;
RESET client_min_messages;
CREATE TABLE when_guard_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL,
                                stock_available boolean, note text);
SELECT idem.register_machine_table('when_guard_orders', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER when_guard_orders_guard BEFORE INSERT OR UPDATE ON when_guard_orders
  FOR EACH ROW WHEN (NEW.note IS NULL) EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO when_guard_orders VALUES ('ord_wg_1', 'acme', 'created', false);
UPDATE when_guard_orders SET status = 'confirmed' WHERE order_id = 'ord_wg_1';
UPDATE when_guard_orders SET status = 'confirmed', note = 'past the WHEN clause' WHERE order_id = 'ord_wg_1';
SELECT order_id, status, stock_available FROM when_guard_orders;
SELECT row_key, from_state, to_state, guard_name, guard_result, outcome FROM idem.transition_log
 WHERE relid = 'when_guard_orders'::regclass ORDER BY log_id;
DROP TABLE when_guard_orders;
