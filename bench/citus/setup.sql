-- The Citus figures' schema (bench/citus.sh), the same on plain PostgreSQL and on the Citus
-- coordinator: a business table keyed by tenant (distributed and colocated with idem.keys when
-- Citus is there) and the payload of bench/pgbench/setup.sql. Eight tenants, spread over the
-- workers by their hash.
\set ON_ERROR_STOP 1
CREATE TABLE bench_orders (
  tenant_id    text COLLATE "C" NOT NULL,
  order_id     text NOT NULL,
  amount_cents bigint NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, order_id)
);
CREATE FUNCTION bench_payload(customer text, amount_cents bigint, ref text) RETURNS jsonb
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN ('{"customer":"' || customer || '","currency":"EUR","amount":' || (amount_cents / 100.0)::numeric(14, 2)
          || ',"items":[{"sku":"SKU-100234","name":"Café crème 250 g","quantity":2,"unit_price":19.99},'
          || '{"sku":"SKU-200345","name":"Müsli","quantity":1,"unit_price":4.5}],'
          || '"shipping":{"method":"express","amount":4.95},"ref":"' || ref || '"}')::jsonb;
CREATE SEQUENCE bench_populated;
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') AS on_citus \gset
\if :on_citus
SELECT count(*) FROM idem.citus_distribute();
SELECT create_distributed_table('bench_orders', 'tenant_id', colocate_with => 'idem.keys');
\endif
