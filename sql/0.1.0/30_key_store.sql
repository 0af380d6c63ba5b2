-- The key store: one row per scoped key, holding the lease while a mutation runs and the response
-- once it is resolved. tenant_id leads the primary key (the distribution column when sharded).

CREATE FUNCTION idem._lock_key(scope_digest bytea) RETURNS bigint
  AS 'MODULE_PATHNAME', 'idem_lock_key'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem._lock_key(bytea) IS
  'Transaction advisory-lock key of a scoped key: the first 8 bytes of its digest.';

CREATE FUNCTION idem._written_by_current_transaction(row_xmin xid) RETURNS boolean
  AS 'MODULE_PATHNAME', 'idem_written_by_current_transaction'
  LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION idem._written_by_current_transaction(xid) IS
  'True when a row version with this xmin was written by the current transaction or one of its subtransactions.';

CREATE FUNCTION idem._require_durable_store() RETURNS void
  AS 'MODULE_PATHNAME', 'idem_require_durable_store'
  LANGUAGE C STABLE;
COMMENT ON FUNCTION idem._require_durable_store() IS
  'Raises ERR_NON_ATOMIC_IDEMPOTENCY_STORE when fsync or synchronous_commit is off or idem.keys is unlogged (unless idem.allow_non_atomic_store).';

-- Fencing tokens come from one sequence, so a token is never issued twice, not even for a key
-- whose record was purged and created again: a holder fenced out stays fenced out.
CREATE SEQUENCE idem.fencing_token_seq AS bigint;

CREATE TABLE idem.keys (
  tenant_id        text        NOT NULL CHECK (tenant_id <> ''),
  scope_digest     bytea       NOT NULL CHECK (octet_length(scope_digest) = 32),
  -- in_progress: leased to `attempt`; resolved: response stored; released: given back (a fresh
  -- attempt next, or a resume if a checkpoint was recorded)
  status           text        NOT NULL CHECK (status IN ('in_progress', 'resolved', 'released')),
  attempt          bigint      NOT NULL CHECK (attempt > 0),     -- the fencing token (rises on every attempt)
  generation       integer     NOT NULL CHECK (generation > 0),  -- +1 each time an expired key is reused
  payload_hash     bytea       NOT NULL CHECK (octet_length(payload_hash) = 32),
  hash_scheme      smallint    NOT NULL,
  caller_id        text        NOT NULL,
  resource         text        NOT NULL,
  client_key       text        NOT NULL,
  lease_interval   interval    NOT NULL,
  ttl              interval    NOT NULL,
  lease_expires_at timestamptz,            -- in_progress only
  recovery_point   text,
  recovery_data    jsonb,
  response_status  smallint CHECK (response_status BETWEEN 100 AND 599),
  response_headers jsonb,
  response_body    bytea,
  order_id         text,
  handler_response jsonb,
  last_error       text,
  created_at       timestamptz NOT NULL,   -- first acquire of this generation
  resolved_at      timestamptz,
  expires_at       timestamptz,            -- resolved/released: when the key may be reused
  PRIMARY KEY (tenant_id, scope_digest),
  CHECK ((status = 'in_progress') = (lease_expires_at IS NOT NULL)),
  CHECK ((status = 'in_progress') = (expires_at IS NULL)),
  CHECK (status <> 'resolved' OR response_status IS NOT NULL)
) WITH (fillfactor = 90);  -- room for the acquire -> complete update on the same page
COMMENT ON TABLE idem.keys IS
  'One row per scoped idempotency key; written only through idem.acquire/checkpoint/complete/release/purge_expired.';

-- pg_dump must carry the records and the token sequence: an extension's tables are otherwise
-- left out, and a restore would forget every resolved key (retries would execute again) and
-- issue fencing tokens a second time.
SELECT pg_catalog.pg_extension_config_dump('idem.keys', '');
SELECT pg_catalog.pg_extension_config_dump('idem.fencing_token_seq', '');

-- purge_expired walks this in expiry order; in_progress rows (expires_at NULL) are not in it.
CREATE INDEX keys_expires_at_idx ON idem.keys (expires_at) WHERE expires_at IS NOT NULL;

CREATE TYPE idem.acquire_result AS (
  outcome          text,        -- acquired | resumed | replay | in_progress | mismatch
  handle           text,        -- pass to checkpoint/complete/release
  attempt          bigint,      -- fencing token to pass with the handle
  generation       integer,
  recovery_point   text,        -- resumed: where the previous holder got to
  recovery_data    jsonb,
  response_status  integer,     -- replay: the stored response, byte for byte
  response_headers jsonb,
  response_body    bytea,
  order_id         text,
  retry_after      integer      -- in_progress: seconds to wait before retrying
);

-- A handle names one record: "<tenant>:<64 hex digits of the scope digest>" (core/keys/handle.hpp).
-- The tenant is recoverable from it, so calls that take only a handle still route by tenant.
CREATE FUNCTION idem._handle(tenant text, scope_digest bytea) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_handle'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem._handle(text, bytea) IS 'The handle of the record (tenant, scope_digest).';

CREATE FUNCTION idem._handle_tenant(handle text) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_handle_tenant'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._handle_tenant(text) IS
  'The tenant named by a handle; raises ERR_ARGUMENT_INVALID for anything acquire did not return.';

CREATE FUNCTION idem._handle_digest(handle text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'idem_handle_digest'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._handle_digest(text) IS
  'The scope digest named by a handle; raises ERR_ARGUMENT_INVALID for anything acquire did not return.';

CREATE FUNCTION idem._retry_after() RETURNS integer
  AS 'MODULE_PATHNAME', 'idem_retry_after'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._retry_after() IS 'idem.retry_after in seconds, the Retry-After of in_progress.';
