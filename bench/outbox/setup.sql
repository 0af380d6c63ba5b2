-- Schema for the outbox benchmarks (scripts/bench-outbox.sh), in a fresh database with
-- pg_idempotency. The business write is the same for every script; the peer is a plain
-- hand-written queue table consumed with FOR UPDATE SKIP LOCKED and woken by NOTIFY, as teams
-- write it by hand (the design pgmq, Que and Graphile Worker share).
\set ON_ERROR_STOP 1

CREATE TABLE ob_orders (
  order_id   text PRIMARY KEY,
  tenant_id  text NOT NULL,
  amount     bigint NOT NULL,
  payload    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE peer_queue (
  id         bigserial PRIMARY KEY,
  tenant_id  text NOT NULL,
  topic      text NOT NULL,
  key        text,
  payload    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION peer_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('peer_queue', '');
  RETURN NULL;
END $$;
CREATE TRIGGER peer_queue_notify AFTER INSERT ON peer_queue FOR EACH STATEMENT EXECUTE FUNCTION peer_notify();

SELECT idem.create_topic('order.intent');
SELECT idem.create_consumer('bench', ARRAY['order.intent']);

-- One consumer step: claim a batch, ack it, in one transaction; returns the events handled.
CREATE FUNCTION bench_claim_ack(p_batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_ids bigint[];
  v_token uuid;
BEGIN
  SELECT array_agg(event_id), min(token::text)::uuid INTO v_ids, v_token FROM idem.claim('bench', NULL, p_batch, '30 s');
  IF v_ids IS NULL THEN RETURN 0; END IF;
  PERFORM idem.ack('bench', v_ids, v_token);
  RETURN cardinality(v_ids);
END $$;

-- The same with the exactly-once check of every event (what a consumer with an effect runs).
CREATE FUNCTION bench_claim_once_ack(p_batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_ids bigint[];
  v_token uuid;
BEGIN
  SELECT array_agg(event_id), min(token::text)::uuid INTO v_ids, v_token FROM idem.claim('bench', NULL, p_batch, '30 s');
  IF v_ids IS NULL THEN RETURN 0; END IF;
  PERFORM idem.consume_once('bench', id, v_token) FROM unnest(v_ids) AS id;
  PERFORM idem.ack('bench', v_ids, v_token);
  RETURN cardinality(v_ids);
END $$;

CREATE FUNCTION peer_consume(p_batch integer) RETURNS integer LANGUAGE sql AS $$
  WITH c AS (SELECT id FROM peer_queue ORDER BY id LIMIT p_batch FOR UPDATE SKIP LOCKED),
       d AS (DELETE FROM peer_queue p USING c WHERE p.id = c.id RETURNING 1)
  SELECT count(*)::integer FROM d $$;

-- n events over `tenants` tenants, `per_commit` per transaction, into the outbox and the peer.
CREATE PROCEDURE bench_fill(n integer, tenants integer, per_commit integer) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n LOOP
    PERFORM idem.emit('t' || (i % tenants), 'order.intent', jsonb_build_object('order', i, 'amount', i % 1000), 'o' || i);
    INSERT INTO peer_queue (tenant_id, topic, key, payload)
      VALUES ('t' || (i % tenants), 'order.intent', 'o' || i, jsonb_build_object('order', i, 'amount', i % 1000));
    IF i % per_commit = 0 THEN COMMIT; END IF;
  END LOOP;
END $$;
