-- Review of 0.3.5 (d73c24e): a transition is logged when the AFTER trigger _idem_log_<status>
-- fires, at the end of its statement. An AFTER trigger of the application's that moves the row
-- on (digital goods ship once confirmed) fires first (AFTER triggers fire in name order, and
-- "autoship" < "_idem_log_status"), and its nested UPDATE logs confirmed -> shipped before the
-- outer statement logs created -> confirmed. The trail then reads created, shipped, confirmed,
-- its last transition "-> confirmed" for an order that is shipped (0.3.4 logged in order).
-- Expected: the trail in the order the transitions happened.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS nested_orders;
DROP FUNCTION IF EXISTS nested_orders_autoship();
RESET client_min_messages;
CREATE TABLE nested_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL,
                            digital boolean NOT NULL DEFAULT false);
SELECT idem.register_machine_table('nested_orders', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER nested_orders_guard BEFORE INSERT OR UPDATE ON nested_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
CREATE FUNCTION nested_orders_autoship() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.digital AND NEW.status = 'confirmed' THEN
    UPDATE nested_orders SET status = 'shipped' WHERE order_id = NEW.order_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER autoship AFTER UPDATE OF status ON nested_orders FOR EACH ROW EXECUTE FUNCTION nested_orders_autoship();
INSERT INTO nested_orders VALUES ('ord_nest_1', 'acme', 'created', true);
UPDATE nested_orders SET status = 'confirmed' WHERE order_id = 'ord_nest_1';
SELECT order_id, status FROM nested_orders;
SELECT row_key, from_state, to_state, outcome FROM idem.transition_log
 WHERE relid = 'nested_orders'::regclass ORDER BY log_id;
SELECT source, what FROM idem.order_trail('ord_nest_1');
DROP TABLE nested_orders;
DROP FUNCTION nested_orders_autoship();
