-- purge_expired(tenant, batch): one tenant's history goes, another's stays (on Citus it runs on
-- the tenant's node, under that node's key locks: tests/citus). A bound role purges its own
-- tenant only; bad input is refused and purges nothing; purge_expired('500') still means every
-- tenant (the tenant form has no default batch, so no call of the old form changes meaning).
\set SHOW_CONTEXT never
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
CREATE TEMP TABLE made AS
  SELECT a.handle, a.attempt FROM unnest(ARRAY['p-one', 'p-two']) t, generate_series(1, 3) n,
         LATERAL idem.acquire(t, format('purge-one-%s-%s', t, n), '{}'::jsonb, ttl => '50 milliseconds') a;
SELECT count(*) AS completed FROM (SELECT idem.complete(handle, attempt, 201, '{}'::jsonb, 'x'::bytea) FROM made) c;
SELECT pg_sleep(0.1);
SELECT expect_error($$SELECT idem.purge_expired(NULL::text, 100)$$) AS null_tenant;
SELECT expect_error($$SELECT idem.purge_expired('p-one', 0)$$) AS zero_batch;
SELECT expect_error($$SELECT idem.purge_expired('p-one', NULL)$$) AS null_batch;
SELECT expect_error($$SELECT idem.purge_expired('', 100)$$) AS empty_tenant;
SELECT expect_error($$SELECT idem.purge_expired(repeat('x', 300), 100)$$) AS long_tenant;
SELECT tenant_id, count(*) FROM idem.keys WHERE tenant_id LIKE 'p-%' GROUP BY 1 ORDER BY 1;
SELECT idem.purge_expired('p-one', 2) AS first_two;
SELECT tenant_id, count(*) FROM idem.keys WHERE tenant_id LIKE 'p-%' GROUP BY 1 ORDER BY 1;
-- Bound roles: their own tenant only, and never every tenant.
CREATE ROLE regress_pot_one LOGIN IN ROLE idem_service;
SELECT idem.bind_tenant('regress_pot_one', 'p-one') AS bound;
\c - regress_pot_one
SELECT expect_error($$SELECT idem.purge_expired('p-two', 100)$$) AS other_tenant;
SELECT expect_error($$SELECT idem.purge_expired(100)$$) AS every_tenant;
SELECT idem.purge_expired('p-one', 100) AS own_tenant_the_rest, idem.purge_expired('p-one', 100) AS none_left;
\c - postgres
SELECT tenant_id, count(*) FROM idem.keys WHERE tenant_id LIKE 'p-%' GROUP BY 1 ORDER BY 1;
SELECT tenant_id, count(*), max(generation) FROM idem.retired_keys WHERE tenant_id LIKE 'p-%' GROUP BY 1 ORDER BY 1;
-- A quoted batch is still a batch: every tenant.
SELECT idem.purge_expired('500') AS every_tenant_purged;
SELECT count(*) AS none_left FROM idem.keys WHERE tenant_id LIKE 'p-%';
SELECT idem.unbind_tenant('regress_pot_one', 'p-one') AS unbound;
DROP OWNED BY regress_pot_one;
DROP ROLE regress_pot_one;
