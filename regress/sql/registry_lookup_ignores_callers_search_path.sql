-- Bug (review of 0.3.5): enforce_transitions looks its table up in idem.machine_tables through
-- SPI as the log's owner (a superuser), with a query whose "=" is resolved under the writing
-- session's search_path. Any idem_service member that can create an operator in a schema puts
-- its own text = text ahead of pg_catalog's and has it run as the superuser at its next guarded
-- write (here it only records who it ran as; it could ALTER ROLE itself SUPERUSER). Returning
-- true, it also makes an unregistered table match the first registration. Expected: the
-- lookup calls no operator of the caller's; the table stays unregistered.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS regress_sp CASCADE;
DROP TABLE IF EXISTS sp_registered;
DROP ROLE IF EXISTS regress_sp_svc;
RESET client_min_messages;
CREATE ROLE regress_sp_svc LOGIN IN ROLE idem_service;
SELECT idem.bind_tenant('regress_sp_svc', 'globex');
CREATE SCHEMA regress_sp AUTHORIZATION regress_sp_svc;
-- One registration exists (the lookup's scan has a row to compare).
CREATE TABLE sp_registered (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
SELECT idem.register_machine_table('sp_registered', 'order', 'status', 'order_id', 'tenant_id');

\c - regress_sp_svc
CREATE TABLE regress_sp.seen (who name, superuser boolean);
CREATE FUNCTION regress_sp.eq(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO regress_sp.seen SELECT current_user, r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user;
  RETURN true;
END $$;
CREATE OPERATOR regress_sp.= (LEFTARG = text, RIGHTARG = text, FUNCTION = regress_sp.eq);
CREATE TABLE regress_sp.orders (order_id text PRIMARY KEY, tenant_id text NOT NULL, status text NOT NULL);
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE ON regress_sp.orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
SET search_path = regress_sp, pg_catalog;
INSERT INTO regress_sp.orders VALUES ('ord_sp_1', 'globex', 'created');
RESET search_path;
-- Nothing of ours ran the caller's operator, least of all as a superuser.
SELECT count(*) AS operator_calls, count(*) FILTER (WHERE superuser) AS as_superuser FROM regress_sp.seen;
SELECT count(*) AS rows_written FROM regress_sp.orders;

\c - postgres
SELECT count(*) AS logged FROM idem.transition_log WHERE row_key = 'ord_sp_1';
SET client_min_messages = warning;
DROP SCHEMA regress_sp CASCADE;
RESET client_min_messages;
DROP TABLE sp_registered;
DELETE FROM idem.machine_tables WHERE table_name = 'sp_registered';
SELECT idem.unbind_tenant('regress_sp_svc', 'globex');
DROP ROLE regress_sp_svc;
