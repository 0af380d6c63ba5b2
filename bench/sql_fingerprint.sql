-- The fingerprint in SQL, side by side with plain sha256 of the jsonb text, over bench_docs
-- (size_class, raw, doc): the documents bench_fingerprint --emit-doc prints, loaded by
-- scripts/bench.sh. Each query runs :reps times after a warm-up round; MiB/s is over the
-- compact JSON text (octet_length(raw)), the same bytes the C++ benchmark counts.
-- usage: psql -v reps=5 -f bench/sql_fingerprint.sql
\set ON_ERROR_STOP 1
\if :{?reps}
\else
  \set reps 5
\endif

-- One row per (size class, method, run): the runs interleave the methods, so drift in machine load
-- spreads over all of them instead of landing on one. Round 0 warms the cache and is not kept.
CREATE FUNCTION pg_temp.time_methods(reps integer)
  RETURNS TABLE (size_class text, docs bigint, bytes numeric, ord integer, method text, ms float8)
  LANGUAGE plpgsql AS $$
DECLARE
  c record;
  m record;
  t0 timestamptz;
BEGIN
  FOR r IN 0..reps LOOP
    FOR c IN SELECT d.size_class, count(*) AS docs, sum(octet_length(d.raw)) AS bytes
               FROM bench_docs d GROUP BY d.size_class ORDER BY sum(octet_length(d.raw)) / count(*) LOOP
      FOR m IN SELECT * FROM (VALUES
          (1, 'idem.payload_hash(doc)',
              'SELECT count(idem.payload_hash(doc)) FROM bench_docs WHERE size_class = $1'),
          (2, 'idem.payload_hash(raw::text)',
              'SELECT count(idem.payload_hash(raw)) FROM bench_docs WHERE size_class = $1'),
          (3, 'sha256(convert_to(doc::text))',
              'SELECT count(sha256(convert_to(doc::text, ''UTF8''))) FROM bench_docs WHERE size_class = $1')
        ) AS v(ord, method, q) LOOP
        t0 := clock_timestamp();
        EXECUTE m.q USING c.size_class;
        IF r > 0 THEN
          size_class := c.size_class; docs := c.docs; bytes := c.bytes;
          ord := m.ord; method := m.method;
          ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
          RETURN NEXT;
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;
END $$;

CREATE TEMP TABLE sql_fingerprint_results AS
SELECT t.size_class, t.docs, t.bytes, t.ord, t.method,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms) AS median_ms,
       min(t.ms) AS best_ms
  FROM pg_temp.time_methods(:reps) t
 GROUP BY 1, 2, 3, 4, 5;

\echo
\echo 'SQL fingerprint throughput:' :reps 'interleaved runs after a warm-up; MiB/s of the compact JSON text, from the median run'
SELECT size_class AS size,
       docs,
       round(bytes / docs) AS bytes_per_doc,
       method,
       round(median_ms::numeric, 1) AS median_ms,
       round((bytes / 1048576.0 / (median_ms / 1000))::numeric, 1) AS mib_per_s,
       round((bytes / 1048576.0 / (best_ms / 1000))::numeric, 1) AS best_mib_per_s,
       round((median_ms * 1000 / docs)::numeric, 1) AS us_per_doc,
       round((median_ms / first_value(median_ms) OVER (PARTITION BY size_class ORDER BY ord DESC))::numeric, 2)
         AS time_vs_sha256
  FROM sql_fingerprint_results
 ORDER BY bytes / docs, ord;
