-- The fake payment processor's own tables. Run at every start, in one transaction: each statement
-- is a no-op when its object exists. Demo data only: no migrations; POST /_control/reset empties it.

-- Two processors starting at once would race on CREATE SCHEMA IF NOT EXISTS ('PROC', 0).
SELECT pg_advisory_xact_lock(x'50524f43'::int, 0);

CREATE SCHEMA IF NOT EXISTS processor;

CREATE TABLE IF NOT EXISTS processor.charges (
  id text PRIMARY KEY CHECK (id ~ '^ch_[0-9a-f]{24}$'),
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,  -- creation order, for lists oldest first
  amount_cents bigint NOT NULL CHECK (amount_cents BETWEEN 1 AND 99999999),
  amount_refunded_cents bigint NOT NULL DEFAULT 0 CHECK (amount_refunded_cents >= 0),
  currency text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  source text NOT NULL CHECK (source ~ '^tok_'),
  description text,
  metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  status text NOT NULL CHECK (status IN ('succeeded', 'failed', 'requires_action')),
  failure_code text CHECK ((status = 'failed') = (failure_code IS NOT NULL)),
  idempotency_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (amount_refunded_cents <= amount_cents),
  CHECK (status = 'succeeded' OR amount_refunded_cents = 0)
);
-- GET /v1/charges?idempotency_key=: how a caller learns after a crash whether it already charged.
CREATE INDEX IF NOT EXISTS charges_idempotency_key ON processor.charges (idempotency_key);

CREATE TABLE IF NOT EXISTS processor.refunds (
  id text PRIMARY KEY CHECK (id ~ '^re_[0-9a-f]{24}$'),
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  charge_id text NOT NULL REFERENCES processor.charges (id),
  amount_cents bigint NOT NULL CHECK (amount_cents > 0),
  currency text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  status text NOT NULL CHECK (status IN ('succeeded')),
  idempotency_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS refunds_charge_id ON processor.refunds (charge_id);
CREATE INDEX IF NOT EXISTS refunds_idempotency_key ON processor.refunds (idempotency_key);

-- The first answer given under each Idempotency-Key, replayed byte for byte until expires_at.
-- An expired row counts as absent; the next request with its key overwrites it (no purge job).
CREATE TABLE IF NOT EXISTS processor.idempotency_keys (
  key text PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 255),
  endpoint text NOT NULL,  -- 'POST /v1/charges' or 'POST /v1/refunds'
  fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  response_status integer NOT NULL CHECK (response_status BETWEEN 200 AND 599),
  response_body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  CHECK (expires_at > created_at)
);
