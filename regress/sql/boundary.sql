-- The C++ -> PostgreSQL error boundary (extension/boundary.hpp): idem._boundary_probe(kind)
-- throws from C++ frames that own heap memory. Each kind must surface as a clean SQL error with
-- its SQLSTATE, and the same backend must carry on (no crash, no reconnect, no aborted state).
\set SHOW_CONTEXT never
SELECT pg_backend_pid() AS pid \gset

-- idem::Error: our SQLSTATE and message.
SELECT expect_error($$SELECT idem._boundary_probe('idem')$$);
SELECT 1 AS alive, pg_backend_pid() = :pid AS same_backend;
-- std::exception: ERR_INTERNAL (XX000) with the exception's text.
SELECT expect_error($$SELECT idem._boundary_probe('std')$$);
SELECT 1 AS alive, pg_backend_pid() = :pid AS same_backend;
-- std::bad_alloc: out of memory (53200).
SELECT expect_error($$SELECT idem._boundary_probe('bad_alloc')$$);
SELECT 1 AS alive, pg_backend_pid() = :pid AS same_backend;
-- A PostgreSQL error raised while C++ objects are alive is re-raised as it was (22012).
SELECT expect_error($$SELECT idem._boundary_probe('pg')$$);
SELECT 1 AS alive, pg_backend_pid() = :pid AS same_backend;
-- A non-standard exception (throw 42): ERR_INTERNAL.
SELECT expect_error($$SELECT idem._boundary_probe('int')$$);
SELECT 1 AS alive, pg_backend_pid() = :pid AS same_backend;
-- Any other word: no error, the number of live objects.
SELECT idem._boundary_probe('ok') AS live_objects;
-- NULL kind is an argument error, raised by the same boundary.
SELECT expect_error($$SELECT idem._boundary_probe(NULL)$$);

-- The errors as psql shows them, raised at top level (not caught by a PL/pgSQL handler), with
-- the hint where there is one. VERBOSITY default prints no LOCATION line.
SELECT idem._boundary_probe('idem');
SELECT idem._boundary_probe('std');
SELECT idem._boundary_probe('bad_alloc');
SELECT idem._boundary_probe('pg');
SELECT idem._boundary_probe('int');
SELECT 1 AS alive, pg_backend_pid() = :pid AS same_backend;

-- Inside a transaction: each error aborts it, a savepoint recovers it, and the transaction can
-- still do work and commit.
BEGIN;
SAVEPOINT s;
SELECT idem._boundary_probe('std');
ROLLBACK TO SAVEPOINT s;
SELECT idem._boundary_probe('pg');
ROLLBACK TO SAVEPOINT s;
SELECT idem._boundary_probe('bad_alloc');
ROLLBACK TO SAVEPOINT s;
SELECT idem._boundary_probe('ok') AS after_savepoints;
COMMIT;

-- Many errors in a row: destructors run every time (a leak or a broken error stack would show
-- up as a crash or an "ERRORDATA_STACK_SIZE exceeded" PANIC long before 2000 iterations).
DO $$
DECLARE
  kinds text[] := ARRAY['idem', 'std', 'bad_alloc', 'pg', 'int'];
  caught integer := 0;
BEGIN
  FOR i IN 1..2000 LOOP
    BEGIN
      PERFORM idem._boundary_probe(kinds[1 + i % 5]);
    EXCEPTION WHEN OTHERS THEN
      caught := caught + 1;
    END;
  END LOOP;
  RAISE NOTICE 'caught % errors', caught;
END $$;
SELECT 1 AS alive, pg_backend_pid() = :pid AS same_backend;

-- The probe is a test hook: not executable by PUBLIC.
SELECT has_function_privilege('public', 'idem._boundary_probe(text)', 'EXECUTE') AS public_can_probe;
