-- idem.fast_path (tests): off sends every acquire and complete to the PL/pgSQL general path,
-- which answers alike (make test runs the whole schedule both ways). Only a superuser sets it.
\set SHOW_CONTEXT never
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_fp_svc;
RESET client_min_messages;
CREATE ROLE regress_fp_svc LOGIN IN ROLE idem_service;
SET idem.fast_path = off;
SELECT outcome, attempt > 0 AS has_token FROM idem.acquire('t-fp', 'fast-path-key-0001', '{"a":1}'::jsonb);
RESET idem.fast_path;
SELECT outcome FROM idem.acquire('t-fp', 'fast-path-key-0001', '{"a":1}'::jsonb);
\c - regress_fp_svc
-- Set before the library is loaded, the value waits for it; loading it drops a value the role may
-- not set.
SET idem.fast_path = off;
SELECT outcome FROM idem.acquire('t-fp', 'fast-path-key-0002', '{"a":1}'::jsonb);
SHOW idem.fast_path;
SET idem.fast_path = off;
SHOW idem.fast_path;
\c - postgres
DROP ROLE regress_fp_svc;
