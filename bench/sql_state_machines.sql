-- check_transition calls per second from one backend (cached machine, no SQL per check), beside
-- its peers: the same loops calling a function that only compares two texts (PERFORM runs a
-- statement per call, an assignment evaluates the expression directly: compare like with like).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE TEMP TABLE sm_marks (what text, calls int, seconds float8);
DO $$
DECLARE t0 timestamptz; n int := 200000; ok boolean;
BEGIN
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP PERFORM idem.check_transition('order', 'confirmed', 'shipped'); END LOOP;
  INSERT INTO sm_marks VALUES ('idem.check_transition (PERFORM)', n, extract(epoch FROM clock_timestamp() - t0));
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP ok := idem.can_transition('order', 'shipped', 'refunded'); END LOOP;
  INSERT INTO sm_marks VALUES ('idem.can_transition (assignment, refused)', n, extract(epoch FROM clock_timestamp() - t0));
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP PERFORM textne('confirmed', 'shipped'); END LOOP;
  INSERT INTO sm_marks VALUES ('peer of check (PERFORM): textne(a, b)', n, extract(epoch FROM clock_timestamp() - t0));
  t0 := clock_timestamp();
  FOR i IN 1..n LOOP ok := textne('confirmed', 'shipped'); END LOOP;
  INSERT INTO sm_marks VALUES ('peer of can (assignment): textne(a, b)', n, extract(epoch FROM clock_timestamp() - t0));
END $$;
SELECT what, calls, round((calls / seconds)::numeric) AS calls_per_second FROM sm_marks;
