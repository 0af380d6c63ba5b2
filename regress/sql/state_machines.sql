-- State machines as data: every allowed and refused transition of the shipped order and payment
-- machines, guards, unknown names, a user machine added with plain INSERTs (and seen at once:
-- the per-backend cache is dropped when the tables change), and the forward-only trigger on a
-- user table in both refusal modes.
\set SHOW_CONTEXT never

SELECT machine, state, description FROM idem.machine_states ORDER BY machine, state;
SELECT machine, from_state, to_state, guard, guard_name FROM idem.machine_transitions ORDER BY machine, from_state, to_state;

-- Every pair of states of both machines: what can_transition answers, and what check_transition
-- raises. The order machine is the reference's §8.2: shipped, cancelled and refunded are terminal.
SELECT s1.machine, s1.state AS from_state, s2.state AS to_state,
       idem.can_transition(s1.machine, s1.state, s2.state) AS can,
       expect_error(format('SELECT idem.check_transition(%L, %L, %L)', s1.machine, s1.state, s2.state)) AS check
  FROM idem.machine_states s1 JOIN idem.machine_states s2 USING (machine)
 WHERE s1.state <> s2.state
 ORDER BY 1, 2, 3;

-- Guards are asked when a row is given: "stock available" and "before payment capture".
SELECT idem.can_transition('order', 'created', 'confirmed', '{"stock_available": true}') AS in_stock,
       idem.can_transition('order', 'created', 'confirmed', '{"stock_available": false}') AS out_of_stock,
       idem.can_transition('order', 'created', 'cancelled', '{"captured": true}') AS cancel_after_capture;
SELECT expect_error($$SELECT idem.check_transition('order', 'created', 'confirmed', '{"stock_available": false}')$$) AS no_stock;
SELECT expect_error($$SELECT idem.check_transition('order', 'created', 'cancelled', '{"captured": true}')$$) AS captured;
SELECT error_hint($$SELECT idem.check_transition('order', 'shipped', 'refunded')$$) AS hint;
-- A row that says something other than a boolean does not pass (it cannot show the condition);
-- row_data must be an object.
SELECT idem.can_transition('order', 'created', 'confirmed', '{"stock_available": "maybe"}') AS maybe_in_stock,
       idem.can_transition('order', 'created', 'cancelled', '{"captured": "x"}') AS maybe_captured,
       idem.can_transition('order', 'created', 'cancelled', '{"captured": false}') AS not_captured;
SELECT expect_error($$SELECT idem.can_transition('order', 'created', 'confirmed', 'null')$$) AS null_row;
SELECT expect_error($$SELECT idem.can_transition('order', 'created', 'confirmed', '[1, 2]')$$) AS array_row;

-- Unknown names are their own errors; NULL arguments are refused.
SELECT expect_error($$SELECT idem.can_transition('invoice', 'open', 'paid')$$) AS unknown_machine;
SELECT expect_error($$SELECT idem.check_transition('order', 'created', 'lost')$$) AS unknown_state;
SELECT expect_error($$SELECT idem.check_transition('order', NULL, 'confirmed')$$) AS null_state;

-- A machine of one's own, added with plain INSERTs, is seen by the next call.
INSERT INTO idem.machine_states VALUES ('ticket', 'open', 'new'), ('ticket', 'closed', 'done');
INSERT INTO idem.machine_transitions VALUES ('ticket', 'open', 'closed', NULL, NULL);
SELECT idem.can_transition('ticket', 'open', 'closed') AS open_to_closed, idem.can_transition('ticket', 'closed', 'open') AS reopen;
INSERT INTO idem.machine_transitions VALUES ('ticket', 'closed', 'open', NULL, NULL);
SELECT idem.can_transition('ticket', 'closed', 'open') AS reopen_after_insert;
DELETE FROM idem.machine_transitions WHERE machine = 'ticket';
DELETE FROM idem.machine_states WHERE machine = 'ticket';
SELECT expect_error($$SELECT idem.can_transition('ticket', 'open', 'closed')$$) AS after_delete;
-- The tables check themselves.
SELECT expect_error($$INSERT INTO idem.machine_transitions VALUES ('order', 'created', 'lost', NULL, NULL)$$) ~ '^23503 ' AS unknown_state_refused;
SELECT expect_error($$INSERT INTO idem.machine_transitions VALUES ('order', 'shipped', 'created', 'idem.guard_stock_available(jsonb)', NULL)$$) ~ '^23514 ' AS guard_needs_a_name;

-- A guard runs with the privileges of whoever changes a row: only a superuser's function of the
-- shape (row jsonb) RETURNS boolean may be one, checked at INSERT and again when it is called.
CREATE ROLE regress_guard_owner NOLOGIN;
CREATE FUNCTION public.not_a_guard(t text) RETURNS boolean LANGUAGE sql RETURN true;
CREATE FUNCTION public.someones_guard(row_data jsonb) RETURNS boolean LANGUAGE sql RETURN true;
ALTER FUNCTION public.someones_guard(jsonb) OWNER TO regress_guard_owner;
INSERT INTO idem.machine_states VALUES ('gm', 'a', 'a'), ('gm', 'b', 'b');
SELECT expect_error($$INSERT INTO idem.machine_transitions VALUES ('gm', 'a', 'b', 'public.not_a_guard(text)', 'wrong shape')$$) AS wrong_shape;
SELECT expect_error($$INSERT INTO idem.machine_transitions VALUES ('gm', 'a', 'b', 'public.someones_guard(jsonb)', 'not a superuser''s')$$) AS not_superusers;
CREATE FUNCTION public.dropped_guard(row_data jsonb) RETURNS boolean LANGUAGE sql RETURN true;
INSERT INTO idem.machine_transitions VALUES ('gm', 'a', 'b', 'public.dropped_guard(jsonb)', 'soon gone');
DROP FUNCTION public.dropped_guard(jsonb);
SELECT regexp_replace(expect_error($$SELECT idem.check_transition('gm', 'a', 'b', '{}')$$), 'guard [0-9]+', 'guard <oid>') AS dropped;
-- A guard the current role may not execute is not run for it.
CREATE FUNCTION public.private_guard(row_data jsonb) RETURNS boolean LANGUAGE sql RETURN true;
REVOKE ALL ON FUNCTION public.private_guard(jsonb) FROM PUBLIC;
UPDATE idem.machine_transitions SET guard = 'public.private_guard(jsonb)', guard_name = 'private' WHERE machine = 'gm';
CREATE ROLE regress_guard_caller NOLOGIN IN ROLE idem_service;
SET ROLE regress_guard_caller;
SELECT regexp_replace(expect_error($$SELECT idem.check_transition('gm', 'a', 'b', '{}')$$), 'guard [0-9]+', 'guard <oid>') AS not_executable;
RESET ROLE;
DELETE FROM idem.machine_transitions WHERE machine = 'gm';
DELETE FROM idem.machine_states WHERE machine = 'gm';
DROP FUNCTION public.not_a_guard(text), public.someones_guard(jsonb), public.private_guard(jsonb);
DROP ROLE regress_guard_owner, regress_guard_caller;

--
-- The trigger on a user table
--
CREATE TABLE orders (order_id text PRIMARY KEY, tenant_id text NOT NULL DEFAULT 'acme', status text NOT NULL,
                     stock_available boolean DEFAULT true, captured boolean DEFAULT false);
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE OF status ON orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
-- Only a table an operator registered is guarded; until then every write is refused.
SELECT expect_error($$INSERT INTO orders (order_id, status) VALUES ('ord-0', 'created')$$) AS unregistered;
SELECT idem.register_machine_table('orders', 'order', 'status', 'order_id', 'tenant_id');
SELECT table_schema, table_name, machine, status_column, key_column, tenant_column, registered_by = session_user AS by_me
  FROM idem.machine_tables;
INSERT INTO orders (order_id, status, stock_available, captured)
  VALUES ('ord-1', 'created', true, false), ('ord-2', 'created', false, false), ('ord-3', 'created', true, true);
SELECT expect_error($$INSERT INTO orders (order_id, status) VALUES ('ord-9', 'lost')$$) AS unknown_initial_state;
UPDATE orders SET status = 'confirmed' WHERE order_id = 'ord-1';
UPDATE orders SET status = 'shipped' WHERE order_id = 'ord-1';
SELECT expect_error($$UPDATE orders SET status = 'refunded' WHERE order_id = 'ord-1'$$) AS refund_shipped;
SELECT expect_error($$UPDATE orders SET status = 'created' WHERE order_id = 'ord-1'$$) AS backwards;
SELECT expect_error($$UPDATE orders SET status = 'confirmed' WHERE order_id = 'ord-2'$$) AS no_stock;
SELECT expect_error($$UPDATE orders SET status = 'cancelled' WHERE order_id = 'ord-3'$$) AS cancel_captured;
UPDATE orders SET status = 'refunded' WHERE order_id = 'ord-3';
-- Unchanged status: not a transition, not logged.
UPDATE orders SET stock_available = false WHERE order_id = 'ord-1';
UPDATE orders SET status = 'shipped' WHERE order_id = 'ord-1';
SELECT order_id, status FROM orders ORDER BY order_id;
SELECT machine, relid, table_name, tenant_id, row_key, from_state, to_state, guard_name, guard_result, outcome
  FROM idem.transition_log ORDER BY log_id;

-- Skip mode: a refused transition leaves the row unchanged, the statement goes on, and the
-- refusal is logged with the transaction (raise mode's refusals roll back with the statement).
-- A trigger without arguments takes the registration's.
CREATE TABLE payments (payment_id text PRIMARY KEY, tenant text NOT NULL DEFAULT 'acme', status text NOT NULL);
SELECT idem.register_machine_table('payments', 'payment', 'status', 'payment_id', 'tenant');
CREATE TRIGGER payments_status BEFORE INSERT OR UPDATE OF status ON payments
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('payment', 'status', 'payment_id', 'skip');
INSERT INTO payments (payment_id, status) VALUES ('pay-1', 'authorized'), ('pay-2', 'captured');
UPDATE payments SET status = 'voided';
SELECT payment_id, status FROM payments ORDER BY payment_id;
SELECT row_key, tenant_id, table_name, from_state, to_state, outcome FROM idem.transition_log WHERE machine = 'payment' ORDER BY log_id;
DROP TRIGGER payments_status ON payments;
CREATE TRIGGER payments_status BEFORE INSERT OR UPDATE OF status ON payments
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SELECT expect_error($$UPDATE payments SET status = 'voided' WHERE payment_id = 'pay-2'$$) AS no_arguments_raise_mode;
-- A row must name its tenant.
SELECT expect_error($$INSERT INTO payments VALUES ('pay-3', NULL, 'authorized')$$) AS null_tenant;

-- Misuse of the trigger and of the registration is named.
CREATE TABLE bad_args (id int, tenant_id text DEFAULT 'acme', st text);
SELECT idem.register_machine_table('bad_args', 'order', 'st', 'id', 'tenant_id');
CREATE TRIGGER bad_args_t BEFORE UPDATE ON bad_args FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order');
INSERT INTO bad_args (id, st) VALUES (1, 'created');
SELECT expect_error($$UPDATE bad_args SET st = 'confirmed'$$) AS too_few_arguments;
DROP TRIGGER bad_args_t ON bad_args;
CREATE TRIGGER bad_args_t BEFORE UPDATE ON bad_args FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status');
SELECT expect_error($$UPDATE bad_args SET st = 'confirmed'$$) AS no_registration_for_that_column;
DROP TRIGGER bad_args_t ON bad_args;
CREATE TRIGGER bad_args_t AFTER UPDATE ON bad_args FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SELECT expect_error($$UPDATE bad_args SET st = 'confirmed'$$) AS after_trigger;
DROP TRIGGER bad_args_t ON bad_args;
ALTER TABLE bad_args RENAME COLUMN st TO state;
CREATE TRIGGER bad_args_t BEFORE UPDATE ON bad_args FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SELECT expect_error($$UPDATE bad_args SET state = 'confirmed'$$) AS registered_column_renamed;
SELECT expect_error($$SELECT idem.register_machine_table('bad_args', 'invoice', 'state', 'id', 'tenant_id')$$) AS unknown_machine;
SELECT expect_error($$SELECT idem.register_machine_table('bad_args', 'order', 'st', 'id', 'tenant_id')$$) AS no_such_column;
SELECT expect_error($$SELECT idem.register_machine_table('bad_args', 'order', 'state', 'id', 'id')$$) AS tenant_not_text;
SELECT expect_error($$SELECT idem.register_machine_table('bad_args', 'order', 'state', 'id', NULL)$$) AS null_argument;
CREATE TABLE gen_status (id int, tenant_id text, raw text, st text GENERATED ALWAYS AS (raw) STORED);
SELECT expect_error($$SELECT idem.register_machine_table('gen_status', 'order', 'st', 'id', 'tenant_id')$$) AS generated_column;
CREATE TEMP TABLE temp_orders (id text, tenant_id text, st text);
SELECT expect_error($$SELECT idem.register_machine_table('temp_orders', 'order', 'st', 'id', 'tenant_id')$$) AS temp_table_registered;
SELECT expect_error($$SELECT idem.register_machine_table('idem.keys', 'order', 'state', 'digest', 'tenant_id')$$) AS extension_table_registered;
CREATE TRIGGER temp_orders_t BEFORE INSERT OR UPDATE ON temp_orders FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'st', 'id');
SELECT expect_error($$INSERT INTO temp_orders VALUES ('victim-order', 'acme', 'created')$$) AS temp_table;
SELECT idem.unregister_machine_table('public', 'bad_args') AS unregistered_bad_args;
SELECT idem.unregister_machine_table('public', 'bad_args') AS unregistered_again;
SELECT expect_error($$UPDATE bad_args SET state = 'confirmed'$$) AS after_unregister;
DROP TABLE bad_args, gen_status, temp_orders;
SELECT expect_error($$SELECT idem.enforce_transitions()$$) AS called_directly;
