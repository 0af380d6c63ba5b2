-- Bug regression: nothing checked the database encoding. In LATIN1 or SQL_ASCII the jsonb path
-- hashed non-UTF-8 bytes while the text path refused them, and a client-computed hash could not
-- match. Fixed: CREATE EXTENSION (and the update to 0.1.1) refuses such a database with
-- ERR_DATABASE_ENCODING_UNSUPPORTED, and leaves nothing behind; a 0.1.0 install already there
-- gets the same error from every fingerprint and every store call.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c idem_latin1
CREATE EXTENSION pg_idempotency;
SELECT count(*) AS schemas_left FROM pg_namespace WHERE nspname = 'idem';
SELECT count(*) AS extensions_left FROM pg_extension WHERE extname = 'pg_idempotency';
-- An old install is refused its update, and the library refuses to fingerprint or store.
CREATE EXTENSION pg_idempotency VERSION '0.1.0';
ALTER EXTENSION pg_idempotency UPDATE TO '0.1.1';
SELECT extversion FROM pg_extension WHERE extname = 'pg_idempotency';
SELECT idem.payload_hash('{"a":1}'::jsonb);
SELECT idem.payload_hash('{"a":1}'::text);
SELECT idem.canonical_json('{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('t', 'latin1-key-000001', '{}'::jsonb);
\c :regress_db
DROP DATABASE idem_latin1;
