-- Review of 0.3.5: the log trigger runs the edge's guard function a second time, on the row as
-- written, after PostgreSQL wrote it. A guard that reads the table (an invariant over other
-- rows: "no other seat of this customer is active") held when the guard trigger asked it, before
-- the write, but no longer holds once the row itself is active: a legitimate created -> active
-- is refused ERR_INVALID_TRANSITION, blamed on "a BEFORE trigger firing after
-- idem.enforce_transitions". The guard's answer depends on when it is asked; the AFTER trigger
-- asks it in a database the transition already changed (a guard of default volatility sees the
-- written row).
-- Expected: the first seat of a customer becomes active and is logged once (guard held); a
-- second seat of the same customer is refused by the guard trigger.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP TABLE IF EXISTS seat_rows;
RESET client_min_messages;
CREATE TABLE seat_rows (seat_id text PRIMARY KEY, tenant_id text NOT NULL, customer text NOT NULL,
                        status text NOT NULL);
CREATE FUNCTION idem.guard_no_other_active_seat(r jsonb) RETURNS boolean
  LANGUAGE sql AS $$
  SELECT NOT EXISTS (SELECT 1 FROM public.seat_rows s
                      WHERE s.customer = r->>'customer' AND s.status = 'active') $$;
INSERT INTO idem.machine_states VALUES ('seat', 'created', 'a seat on order'), ('seat', 'active', 'in use');
INSERT INTO idem.machine_transitions VALUES
  ('seat', 'created', 'active', 'idem.guard_no_other_active_seat(jsonb)', 'one active seat per customer');
SELECT idem.register_machine_table('seat_rows', 'seat', 'status', 'seat_id', 'tenant_id');
CREATE TRIGGER seat_rows_guard BEFORE INSERT OR UPDATE ON seat_rows
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO seat_rows VALUES ('seat_1', 'acme', 'cust_1', 'created'), ('seat_2', 'acme', 'cust_1', 'created');
-- The customer's first active seat: the guard holds.
UPDATE seat_rows SET status = 'active' WHERE seat_id = 'seat_1';
-- A second one: the guard does not hold.
UPDATE seat_rows SET status = 'active' WHERE seat_id = 'seat_2';
SELECT seat_id, status FROM seat_rows ORDER BY seat_id;
SELECT row_key, from_state, to_state, guard_name, guard_result, outcome FROM idem.transition_log
 WHERE relid = 'seat_rows'::regclass ORDER BY log_id;
DROP TABLE seat_rows;
DELETE FROM idem.machine_tables WHERE machine = 'seat';
DELETE FROM idem.machine_transitions WHERE machine = 'seat';
DELETE FROM idem.machine_states WHERE machine = 'seat';
DROP FUNCTION idem.guard_no_other_active_seat(jsonb);
