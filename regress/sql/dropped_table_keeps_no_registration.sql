-- Bug (review of 0.3.5): the registry holds names, and nothing removes a registration when its
-- table is dropped; unregister_machine_table takes a regclass, so for a dropped table it cannot
-- even be called ("relation does not exist"): only a superuser's DELETE removes the row. Any
-- role that can create a table of that name in that schema later gets it guarded and logged
-- under the operator's old registration. Expected: a dropped table's registration goes with it
-- (the registry no longer lists it), so a new table of the same name is unregistered.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS regress_dr CASCADE;
DROP ROLE IF EXISTS regress_dr_svc;
DROP ROLE IF EXISTS regress_dr_op;
RESET client_min_messages;
CREATE ROLE regress_dr_svc LOGIN IN ROLE idem_service;
CREATE ROLE regress_dr_op LOGIN IN ROLE idem_operator;
CREATE SCHEMA regress_dr;
GRANT USAGE, CREATE ON SCHEMA regress_dr TO regress_dr_svc;
GRANT USAGE ON SCHEMA regress_dr TO regress_dr_op;
CREATE TABLE regress_dr.orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
\c - regress_dr_op
SELECT idem.register_machine_table('regress_dr.orders', 'order', 'status', 'order_id', 'tenant_id');
\c - postgres
DROP TABLE regress_dr.orders;
\c - regress_dr_op
SELECT table_schema, table_name FROM idem.machine_tables WHERE table_schema = 'regress_dr';
\c - regress_dr_svc
-- A table the operator never registered, under the dropped one's name.
CREATE TABLE regress_dr.orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE ON regress_dr.orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO regress_dr.orders VALUES ('ord_dr_1', 'acme', 'created');
\c - postgres
SELECT count(*) AS logged FROM idem.transition_log WHERE row_key = 'ord_dr_1';
SET client_min_messages = warning;
DROP SCHEMA regress_dr CASCADE;
RESET client_min_messages;
DELETE FROM idem.machine_tables WHERE table_schema = 'regress_dr';
DROP ROLE regress_dr_svc, regress_dr_op;
