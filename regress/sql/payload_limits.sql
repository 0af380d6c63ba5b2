-- Bug regression: payloads had no bound. Parsing and canonicalizing never polled for cancel, so
-- statement_timeout could not stop a huge payload; C++ allocations escape PostgreSQL's memory
-- accounting; and canonical_json of about 1 GB could overflow an int length and truncate silently.
-- Fixed: idem.max_payload_bytes (1 MiB by default, superuser-only) refuses larger payloads with
-- ERR_PAYLOAD_TOO_LARGE before reading them; core/ polls for interrupts through the boundary
-- (a cancel surfaces as 57014 and the backend goes on); a result over 1 GB is refused, never cut.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session
SHOW idem.max_payload_bytes;
CREATE TEMP TABLE big AS
  SELECT '["' || repeat('x', 1048576) || '"]' AS text_doc,
         ('["' || repeat('x', 1048576) || '"]')::jsonb AS jsonb_doc,
         '["' || repeat('x', 1048570) || '"]' AS fits;
SELECT octet_length(text_doc) AS text_bytes, octet_length(fits) AS fitting_bytes FROM big;
SELECT expect_error('SELECT idem.payload_hash(text_doc) FROM big') AS text_hash;
SELECT expect_error('SELECT idem.payload_hash(jsonb_doc) FROM big') AS jsonb_hash;
SELECT expect_error('SELECT idem.canonical_json(text_doc) FROM big') AS canonical_text;
SELECT expect_error('SELECT idem.canonical_json(jsonb_doc) FROM big') AS canonical_jsonb;
SELECT expect_error($$SELECT idem.acquire('t-big', 'big-payload-key-1', text_doc) FROM big$$) AS acquire_text;
SELECT expect_error($$SELECT idem.acquire('t-big', 'big-payload-key-1', jsonb_doc) FROM big$$) AS acquire_jsonb;
SELECT count(*) AS nothing_recorded FROM idem.keys WHERE client_key = 'big-payload-key-1';
SELECT octet_length(idem.payload_hash(fits)) AS fitting_hash_bytes FROM big;
SELECT error_hint('SELECT idem.payload_hash(text_doc) FROM big') AS hint;
-- The bound is a setting: lower it, and a small document is refused too.
SET idem.max_payload_bytes = '1kB';
SELECT expect_error($$SELECT idem.payload_hash(repeat('1', 2000))$$) AS over_1kb;
SELECT octet_length(idem.payload_hash('[1]')) AS under_1kb;
RESET idem.max_payload_bytes;
SET ROLE idem_service;
SELECT expect_error($$SET idem.max_payload_bytes = '100MB'$$) AS service_raises_bound;
RESET ROLE;
-- A cancel reaches the parser: statement_timeout stops a large parse with 57014 (a cancel is not
-- caught by expect_error's WHEN OTHERS, so the error shows as it is), and the backend answers
-- afterwards.
SET idem.max_payload_bytes = '64MB';
CREATE TEMP TABLE huge AS SELECT '[' || repeat('"abcdefgh",', 2500000) || '1]' AS doc;
SET statement_timeout = '20ms';
SELECT idem.payload_hash(doc) FROM huge;
RESET statement_timeout;
RESET idem.max_payload_bytes;
SELECT 1 AS backend_alive;
