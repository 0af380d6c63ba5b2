-- Cost per key as the store grows from empty: one procedure resolves :keys new keys in a loop
-- (acquire + complete, a transaction per key as a service runs them: the procedure COMMITs, and
-- PL/pgSQL keeps its cached plans across those commits), right after VACUUM ANALYZE of an empty
-- store, and reports
-- the cost per key of the first and the last 1,000. Beside it, in the same run, its peer: the bare
-- write (the same loop inserting the order row into a keyed table of its own).
-- psql -v keys=100000 -f bench/sql_store_growth.sql (in a database with the extension)
\set ON_ERROR_STOP on
SET client_min_messages = warning;
TRUNCATE idem.keys, idem.retired_keys;
DROP TABLE IF EXISTS growth_orders, growth_marks;
CREATE TABLE growth_orders (tenant_id text COLLATE "C", order_key text, amount int, PRIMARY KEY (tenant_id, order_key));
CREATE TABLE growth_marks (flow text, n int, at timestamptz);
VACUUM ANALYZE idem.keys;
VACUUM ANALYZE idem.retired_keys;
VACUUM ANALYZE growth_orders;

CREATE OR REPLACE PROCEDURE growth_run(flow text, n int) LANGUAGE plpgsql AS $$
DECLARE r idem.acquire_result;
BEGIN
  FOR i IN 0..n LOOP
    IF i IN (0, 1000, n - 1000, n) THEN INSERT INTO growth_marks VALUES (flow, i, clock_timestamp()); END IF;
    EXIT WHEN i = n;
    IF flow = 'idempotent' THEN
      r := idem.acquire('growth', format('growth-key-%010s', i), jsonb_build_object('amount', i));
      PERFORM idem.complete(r.handle, r.attempt, 201, '{}', 'created');
    ELSE
      INSERT INTO growth_orders VALUES ('growth', format('growth-key-%010s', i), i) ON CONFLICT DO NOTHING;
    END IF;
    COMMIT;
  END LOOP;
END $$;

CALL growth_run('idempotent', :keys);
CALL growth_run('bare write', :keys);

SELECT flow,
       round((extract(epoch FROM max(at) FILTER (WHERE n = 1000) - max(at) FILTER (WHERE n = 0)))::numeric, 4) AS first_1000_ms_per_key,
       round((extract(epoch FROM max(at) FILTER (WHERE n = :keys) - max(at) FILTER (WHERE n = :keys - 1000)))::numeric, 4) AS last_1000_ms_per_key,
       round(((extract(epoch FROM max(at) FILTER (WHERE n = :keys) - max(at) FILTER (WHERE n = :keys - 1000))) /
              nullif(extract(epoch FROM max(at) FILTER (WHERE n = 1000) - max(at) FILTER (WHERE n = 0)), 0))::numeric, 2) AS last_over_first
  FROM growth_marks GROUP BY flow ORDER BY flow DESC;
DROP PROCEDURE growth_run(text, int);
DROP TABLE growth_orders, growth_marks;
TRUNCATE idem.keys;
