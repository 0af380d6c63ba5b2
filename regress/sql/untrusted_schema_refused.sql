-- Bug regression: CREATE EXTENSION adopted an existing schema idem owned by another role, who
-- could then drop every record or plant an overload our functions would call. Fixed: the install
-- refuses (ERR_SCHEMA_UNTRUSTED) unless schema idem is the installer's and holds nothing but the
-- extension, and leaves nothing behind.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_schema_trust;
\c idem_schema_trust
SET client_min_messages = warning;
CREATE ROLE idem_hostile_owner NOLOGIN;
-- Owned by another role.
CREATE SCHEMA idem AUTHORIZATION idem_hostile_owner;
CREATE EXTENSION pg_idempotency;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT count(*) AS objects_left FROM pg_proc WHERE pronamespace = 'idem'::regnamespace;
DROP SCHEMA idem;
-- The installer's, but holding a planted overload.
CREATE SCHEMA idem;
CREATE FUNCTION idem.scope_digest(tenant text, caller text, resource text, key text, extra int) RETURNS bytea
  LANGUAGE sql AS 'SELECT NULL::bytea';
CREATE EXTENSION pg_idempotency;
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'pg_idempotency';
DROP FUNCTION idem.scope_digest(text, text, text, text, int);
-- ... or a planted table.
CREATE TABLE idem.notes (t text);
CREATE EXTENSION pg_idempotency;
DROP TABLE idem.notes;
-- Empty and the installer's: accepted.
CREATE EXTENSION pg_idempotency;
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
-- An object planted after the install is found by the next update check, e.g. on upgrade.
DROP EXTENSION pg_idempotency;
DROP SCHEMA idem;
DROP ROLE idem_hostile_owner;
\c :regress_db
DROP DATABASE idem_schema_trust;
