-- Bug (review of 0.3.5): 0.3.4 let a table guard two status columns with two machines (one
-- enforce_transitions trigger each) and let a trigger name no key column (machine, column).
-- The 0.3.5 registry holds one registration per table (primary key schema, name), and the
-- update registers only triggers with a key column, the first trigger by name per table. After
-- ALTER EXTENSION UPDATE, every write to such a table fails ("the trigger's arguments differ
-- from the registration" / "not registered"), although both tables have the tenant_id column
-- the update promises to register. Expected: tables that were guarded and have tenant_id keep
-- accepting allowed transitions, and every guarded column is still guarded.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS idem_upgrade_035_cols;
RESET client_min_messages;
CREATE DATABASE idem_upgrade_035_cols;
\c idem_upgrade_035_cols
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '0.3.4';
RESET client_min_messages;
-- An order and its payment in one row, each status following its machine.
CREATE TABLE checkout (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL,
                       payment_status text NOT NULL);
CREATE TRIGGER checkout_order BEFORE INSERT OR UPDATE ON checkout
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status', 'order_id');
CREATE TRIGGER checkout_payment BEFORE INSERT OR UPDATE ON checkout
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('payment', 'payment_status', 'order_id');
-- A trigger without a key column (0.3.4 logged row_key NULL).
CREATE TABLE keyless (id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
CREATE TRIGGER keyless_status BEFORE INSERT OR UPDATE ON keyless
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('order', 'status');
ALTER EXTENSION pg_idempotency UPDATE TO '0.3.5';
INSERT INTO checkout VALUES ('ord-c1', 'acme', 'created', 'authorized');
UPDATE checkout SET payment_status = 'captured' WHERE order_id = 'ord-c1';
-- Both columns still guarded.
UPDATE checkout SET payment_status = 'authorized' WHERE order_id = 'ord-c1';
UPDATE checkout SET status = 'shipped' WHERE order_id = 'ord-c1';
INSERT INTO keyless VALUES ('k-1', 'acme', 'created');
SELECT order_id, status, payment_status FROM checkout;
SELECT count(*) AS keyless_rows FROM keyless;
SELECT machine, tenant_id, from_state, to_state, outcome FROM idem.transition_log ORDER BY log_id;
\c :regress_db
DROP DATABASE idem_upgrade_035_cols;
