-- The checkout service's own tables (scripts/stack.sh applies this file to the demo database):
-- orders under the order state machine, refunds, and the sync plane's records written by the
-- order consumer. The service and the consumer log in as their own roles, members of
-- pg_idempotency's idem_service / idem_consumer.
CREATE EXTENSION IF NOT EXISTS pg_idempotency;

DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'checkout_service') THEN
    CREATE ROLE checkout_service LOGIN IN ROLE idem_service;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'order_consumer') THEN
    CREATE ROLE order_consumer LOGIN IN ROLE idem_consumer, idem_service;
  END IF;
END $$;

-- Every table is keyed by its tenant first (tenant_id text COLLATE "C", as idem.keys'), so the
-- same schema distributes on Citus beside the tenant's keys (citus.sql, docs/citus.md).
CREATE TABLE orders (
  tenant_id      text COLLATE "C" NOT NULL,
  order_id       text NOT NULL,
  session_id     text NOT NULL,
  payment_id     uuid NOT NULL,
  amount_cents   bigint NOT NULL CHECK (amount_cents > 0),
  refunded_cents bigint NOT NULL DEFAULT 0 CHECK (refunded_cents BETWEEN 0 AND amount_cents),
  currency       text NOT NULL,
  charge_id      text NOT NULL,
  status         text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, order_id),
  UNIQUE (tenant_id, payment_id),
  UNIQUE (tenant_id, charge_id)
);
-- The status column follows the reference's order machine (created -> confirmed -> shipped, ...):
-- registered by the operator (the schema runs as one), logged with each row's tenant.
SELECT idem.register_machine_table('orders', 'order', 'status', 'order_id', 'tenant_id');
CREATE TRIGGER orders_status BEFORE INSERT OR UPDATE OF status, tenant_id, order_id ON orders
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();

CREATE TABLE refunds (
  tenant_id    text COLLATE "C" NOT NULL,
  refund_id    text NOT NULL,  -- the processor's re_...
  payment_id   uuid NOT NULL,
  amount_cents bigint NOT NULL CHECK (amount_cents > 0),
  currency     text NOT NULL,
  reason       text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, refund_id),
  FOREIGN KEY (tenant_id, payment_id) REFERENCES orders (tenant_id, payment_id)
);

-- The sync plane (reference §4.2): one row per order, whatever the number of deliveries.
CREATE TABLE sync_orders (
  tenant_id       text COLLATE "C" NOT NULL,
  order_id        text NOT NULL,
  idempotency_key text NOT NULL,
  payment_id      uuid NOT NULL,
  charge_id       text NOT NULL,
  amount_cents    bigint NOT NULL,
  currency        text NOT NULL,
  event_id        bigint NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, order_id)
);
-- Its audit log (reference §6.1 sync_order_mutations): every recording, appended.
CREATE TABLE sync_order_mutations (
  tenant_id       text COLLATE "C" NOT NULL,
  mutation_id     bigint GENERATED ALWAYS AS IDENTITY,
  order_id        text NOT NULL,
  idempotency_key text NOT NULL,
  event_id        bigint NOT NULL,
  attempt         integer NOT NULL,
  handler_response jsonb NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, mutation_id)
);

GRANT SELECT, INSERT, UPDATE ON orders TO checkout_service;
GRANT SELECT, INSERT ON refunds TO checkout_service;
GRANT SELECT, INSERT ON sync_orders, sync_order_mutations TO order_consumer;
GRANT SELECT ON orders TO order_consumer;

SELECT idem.create_topic('order_intent');
SELECT idem.create_topic('order.created');
SELECT idem.create_consumer('sync_plane', ARRAY['order_intent']);
