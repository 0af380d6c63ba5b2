-- The checkout service's tables on a Citus cluster (docs/citus.md), applied on the coordinator
-- after schema.sql, as an existing installation is distributed: pg_idempotency first (its
-- tenant tables beside idem.keys, its shared tables on every node), then the service's tables,
-- each by its tenant and colocated with idem.keys, so that a tenant's acquire, order, refund,
-- event and complete all write one worker's shards in one local transaction.
SELECT count(*) AS idem_changes FROM idem.citus_distribute();

-- orders carries the order machine's guard and log triggers (schema.sql): Citus copies them to
-- the shards only when told they are safe for this distribution (they touch only the row's own
-- tenant's colocated shards and the reference tables).
SET citus.enable_unsafe_triggers = on;
SELECT create_distributed_table('orders', 'tenant_id', colocate_with => 'idem.keys');
RESET citus.enable_unsafe_triggers;
SELECT create_distributed_table('refunds', 'tenant_id', colocate_with => 'idem.keys');
SELECT create_distributed_table('sync_orders', 'tenant_id', colocate_with => 'idem.keys');
SELECT create_distributed_table('sync_order_mutations', 'tenant_id', colocate_with => 'idem.keys');

-- Each says ok, or names what is wrong with it.
SELECT t AS table_name, c.ok, c.problem
  FROM unnest(ARRAY['orders', 'refunds', 'sync_orders', 'sync_order_mutations']) t,
       LATERAL idem.citus_check_table(t::regclass) c;
