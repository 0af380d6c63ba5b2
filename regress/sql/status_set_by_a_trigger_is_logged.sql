-- Review of 0.3.5 (d73c24e): the log trigger is AFTER INSERT OR UPDATE OF <status>, and
-- PostgreSQL fires a column trigger only when the UPDATE names the column in its SET list, not
-- when a BEFORE trigger changes it. So:
-- 1. A BEFORE trigger that sets the status and fires before the guard (as the guard's own hint
--    says it must) on an UPDATE of another column: the guard checks created -> confirmed and
--    runs its guard, the row is written, and nothing is logged (0.3.4 logged it).
-- 2. A BEFORE trigger firing after the guard that moves the status backwards on an UPDATE of
--    another column: the refused confirmed -> created is written unchecked and unlogged, though
--    the log trigger is documented to catch exactly that (ERR_INVALID_TRANSITION).
-- Expected: 1 logs created -> confirmed (guard held); 2 fails with ERR_INVALID_TRANSITION and
-- the row stays confirmed.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS trig_set_orders;
DROP FUNCTION IF EXISTS trig_set_autoconfirm();
DROP FUNCTION IF EXISTS trig_set_rewind();
RESET client_min_messages;
CREATE TABLE trig_set_orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL,
                              payment_ref text, note text);
SELECT idem.register_machine_table('trig_set_orders', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER trig_set_orders_guard BEFORE INSERT OR UPDATE ON trig_set_orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
-- The application confirms an order once its payment reference arrives.
CREATE FUNCTION trig_set_autoconfirm() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.payment_ref IS NOT NULL AND OLD.payment_ref IS NULL AND NEW.status = 'created' THEN
    NEW.status := 'confirmed';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER a_autoconfirm BEFORE UPDATE ON trig_set_orders FOR EACH ROW EXECUTE FUNCTION trig_set_autoconfirm();
INSERT INTO trig_set_orders VALUES ('ord_ts_1', 'acme', 'created');
UPDATE trig_set_orders SET payment_ref = 'pay_1' WHERE order_id = 'ord_ts_1';
SELECT order_id, status FROM trig_set_orders;
SELECT row_key, from_state, to_state, guard_name, guard_result, outcome FROM idem.transition_log
 WHERE relid = 'trig_set_orders'::regclass ORDER BY log_id;
-- A trigger after the guard moves the status backwards, the UPDATE naming another column.
CREATE FUNCTION trig_set_rewind() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF NEW.note = 'rewind' THEN NEW.status := 'created'; END IF; RETURN NEW; END $$;
CREATE TRIGGER zz_rewind BEFORE UPDATE ON trig_set_orders FOR EACH ROW EXECUTE FUNCTION trig_set_rewind();
UPDATE trig_set_orders SET note = 'rewind' WHERE order_id = 'ord_ts_1';
SELECT order_id, status FROM trig_set_orders;
SELECT row_key, from_state, to_state, guard_name, guard_result, outcome FROM idem.transition_log
 WHERE relid = 'trig_set_orders'::regclass ORDER BY log_id;
DROP TABLE trig_set_orders;
DROP FUNCTION trig_set_autoconfirm();
DROP FUNCTION trig_set_rewind();
