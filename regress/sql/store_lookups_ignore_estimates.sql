-- Bug regression: right after VACUUM ANALYZE of a new, empty store, a procedure resolving keys in
-- a loop kept cached plans that scanned idem.keys sequentially (the cost per key grew from 0.32 ms
-- to 1.6 ms over 8,000 keys). Fixed: every function that reads or writes the store runs with
-- enable_seqscan off, so its plans use the primary key whatever the planner's estimate. The proof
-- here counts scans, not time: pg_stat_xact_user_tables within the transaction. A control loop
-- without that setting shows the trap is real on this server.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
CREATE DATABASE idem_plan_check;
\c idem_plan_check
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency;
VACUUM ANALYZE idem.keys;
VACUUM ANALYZE idem.retired_keys;
-- Pending statistics reach the shared counters when the backend goes idle; force that now, so
-- the counts below are this transaction's alone (the install's own scans are not among them).
SELECT pg_stat_force_next_flush();
BEGIN;
DO $$
DECLARE r idem.acquire_result;
BEGIN
  FOR i IN 1..2000 LOOP
    r := idem.acquire('t-plan', format('plan-key-%08s', i), jsonb_build_object('i', i));
    PERFORM idem.complete(r.handle, r.attempt, 200, '{}', 'ok');
    -- The same key again: the replay path's lookup.
    r := idem.acquire('t-plan', format('plan-key-%08s', i), jsonb_build_object('i', i));
  END LOOP;
END $$;
SELECT relname, seq_scan, idx_scan, n_tup_ins
  FROM pg_stat_xact_user_tables WHERE relid IN ('idem.keys'::regclass, 'idem.retired_keys'::regclass) ORDER BY relname;
COMMIT;
-- Control: the same primary-key lookup from a plain PL/pgSQL loop, on a freshly analyzed empty
-- copy of the table, is planned as a sequential scan.
CREATE TABLE plan_control (LIKE idem.keys INCLUDING ALL EXCLUDING GENERATED);  -- purge_after as a plain column
VACUUM ANALYZE plan_control;
SELECT pg_stat_force_next_flush();
BEGIN;
DO $$
DECLARE found_rows integer := 0;
BEGIN
  FOR i IN 1..200 LOOP
    INSERT INTO plan_control SELECT * FROM idem.keys k WHERE k.client_key = format('plan-key-%08s', i);
    PERFORM 1 FROM plan_control c WHERE c.tenant_id = 't-plan' AND c.scope_digest = idem.scope_digest('t-plan', '', '', format('plan-key-%08s', i));
  END LOOP;
END $$;
SELECT seq_scan > 0 AS control_scans_sequentially FROM pg_stat_xact_user_tables WHERE relid = 'plan_control'::regclass;
COMMIT;
\c :regress_db
DROP DATABASE idem_plan_check;
