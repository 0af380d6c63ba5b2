-- Bug (review of 0.3.5): an attempt that dies leaves an 'abandoned' audit row only when another
-- attempt takes its key over. When nobody retries, purge_expired deletes the record once its
-- lease and TTL have run out, and the attempt (which may have called the processor) leaves no
-- trace at all: issue 20, item 5 ("a holder that called the processor and died before its
-- checkpoint leaves no trace once the record is history"). The next request starts generation
-- 2 and double_charges has nothing to compare. Expected: the purge appends the abandoned row
-- (handler_called unknown) for an in-progress record it deletes.
\set SHOW_CONTEXT never
SELECT handle AS h, attempt AS a, generation AS g
  FROM idem.acquire('t-purge-ab', 'purged-abandoned-001', '{"amount":100}'::jsonb,
                    lease => '50 milliseconds', ttl => '50 milliseconds') \gset
-- The holder calls the processor and dies; nobody retries until the record is history.
SELECT pg_sleep(0.3);
SELECT idem.purge_expired() >= 1 AS purged;
SELECT count(*) AS records_left FROM idem.keys WHERE tenant_id = 't-purge-ab';
SELECT outcome, attempt = :a AS its_attempt, generation = :g AS its_generation, handler_called
  FROM idem.mutations WHERE tenant_id = 't-purge-ab' ORDER BY mutation_id;
