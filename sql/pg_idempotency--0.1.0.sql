-- pg_idempotency 0.1.0. Built by concatenating sql/0.1.0/*.sql in name order (see Makefile).
\echo Use "CREATE EXTENSION pg_idempotency" to load this file. \quit
-- Fingerprints: RFC 8785 canonical JSON and SHA-256 payload hashes (core/json, core/fingerprint).

CREATE FUNCTION idem.canonical_json(payload text) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_canonical_json_text'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.canonical_json(text) IS
  'RFC 8785 canonical form of JSON text, parsed strictly (duplicate keys, bad UTF-8, comments, trailing commas refused with ERR_PAYLOAD_JSON_INVALID).';

CREATE FUNCTION idem.canonical_json(payload jsonb) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_canonical_json_jsonb'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.canonical_json(jsonb) IS
  'RFC 8785 canonical form of a jsonb value (jsonb has already dropped duplicate keys and number spelling).';

CREATE FUNCTION idem.payload_hash(payload jsonb, exclude text[] DEFAULT '{}') RETURNS bytea
  AS 'MODULE_PATHNAME', 'idem_payload_hash_jsonb'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.payload_hash(jsonb, text[]) IS
  'SHA-256 (32 bytes) of the RFC 8785 form of payload minus the RFC 6901 pointers in exclude; scheme idem.fingerprint_scheme(). Numbers a double cannot hold exactly raise ERR_PAYLOAD_NUMBER_PRECISION.';

CREATE FUNCTION idem.payload_hash(payload text, exclude text[] DEFAULT '{}') RETURNS bytea
  AS 'MODULE_PATHNAME', 'idem_payload_hash_text'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.payload_hash(text, text[]) IS
  'payload_hash of JSON text parsed with the strict parser (duplicate keys refused rather than silently merged).';

CREATE FUNCTION idem.fingerprint_scheme() RETURNS integer
  AS 'MODULE_PATHNAME', 'idem_fingerprint_scheme'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem.fingerprint_scheme() IS
  'The fingerprint scheme payload_hash implements and every record stores (1 = RFC 8785 + SHA-256, exact numbers only).';

-- The hash together with the scheme that produced it, as a record stores them.
CREATE FUNCTION idem.fingerprint(payload jsonb, exclude text[] DEFAULT '{}', OUT hash bytea, OUT scheme integer)
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN (idem.payload_hash(payload, exclude), idem.fingerprint_scheme());
COMMENT ON FUNCTION idem.fingerprint(jsonb, text[]) IS
  'payload_hash with its scheme number: (hash bytea, scheme integer).';

CREATE FUNCTION idem.fingerprint(payload text, exclude text[] DEFAULT '{}', OUT hash bytea, OUT scheme integer)
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN (idem.payload_hash(payload, exclude), idem.fingerprint_scheme());
COMMENT ON FUNCTION idem.fingerprint(text, text[]) IS
  'payload_hash of JSON text (strict parser) with its scheme number: (hash bytea, scheme integer).';
-- Idempotency keys: validation and the injective scoped-key digest (core/keys).

CREATE FUNCTION idem.validate_key(key text) RETURNS void
  AS 'MODULE_PATHNAME', 'idem_validate_key'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem.validate_key(text) IS
  'Raises ERR_IDEMPOTENCY_KEY_MISSING for NULL/empty, ERR_IDEMPOTENCY_KEY_INVALID outside printable ASCII or idem.key_min_length..idem.key_max_length.';

CREATE FUNCTION idem.scope_digest(tenant text, caller text, resource text, key text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'idem_scope_digest'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem.scope_digest(text, text, text, text) IS
  'SHA-256 of the length-prefixed (tenant, caller, resource, key): the stored identity of a record. Validates the key; NULL or empty tenant raises ERR_ARGUMENT_INVALID.';

CREATE FUNCTION idem._boundary_probe(kind text) RETURNS integer
  AS 'MODULE_PATHNAME', 'idem_raise_cpp_exception'
  LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idem._boundary_probe(text) IS
  'Test hook for the C++/PostgreSQL error boundary: throws the named kind of error (idem, std, bad_alloc, pg, int) from C++ frames that own memory.';
REVOKE ALL ON FUNCTION idem._boundary_probe(text) FROM PUBLIC;
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
-- acquire: the first step of every idempotent mutation. Returns an outcome; raises only for
-- invalid input (and 40001 when a REPEATABLE READ/SERIALIZABLE snapshot cannot see the winner).
--
-- Mutual exclusion without blocking: every write to a key row happens under a transaction-level
-- advisory lock on the key. A contender that cannot take it at once answers in_progress instead
-- of queueing behind the row lock of an open transaction (on_busy => 'wait' queues instead).

CREATE FUNCTION idem._acquire(p_tenant text, p_digest bytea, p_key text, p_hash bytea,
                              p_caller text, p_resource text, p_lease interval, p_ttl interval,
                              p_on_busy text)
  RETURNS idem.acquire_result
  -- Called only by the idem.acquire overloads, which already run as the owner with a safe
  -- search_path: a second SECURITY DEFINER/SET here would only cost a GUC save and restore.
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r            record;   -- the key's row, with row_xmin: who wrote this version
  res          idem.acquire_result;
  v_now        timestamptz := clock_timestamp();
  v_lease      interval := coalesce(p_lease, current_setting('idem.lease_timeout')::interval);
  v_ttl        interval := coalesce(p_ttl, current_setting('idem.default_ttl')::interval);
  v_lock       bigint := idem._lock_key(p_digest);
  v_locked     boolean := false;
  v_found      boolean;
  v_busy       boolean;  -- the key is executing right now (elsewhere, or in this transaction)
  v_can_wait   boolean;  -- and on_busy => 'wait' may poll until they finish
  v_own        boolean;
  v_poll       float8 := 0.005;
  v_read_committed boolean := current_setting('transaction_isolation') = 'read committed';
BEGIN
  -- Compared as instants: '1 month -30 days' is not positive on every date.
  IF v_now + v_lease <= v_now OR v_now + v_ttl <= v_now THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: lease (%) and ttl (%) must be positive intervals', v_lease, v_ttl
      USING ERRCODE = 'IK012';
  END IF;
  IF p_on_busy IS NULL OR p_on_busy NOT IN ('reject', 'wait') THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: on_busy must be ''reject'' or ''wait'', not %', coalesce(quote_literal(p_on_busy), 'NULL')
      USING ERRCODE = 'IK012';
  END IF;
  PERFORM idem._require_durable_store();
  res.handle := idem._handle(p_tenant, p_digest);

  LOOP
    v_busy := false;
    IF NOT v_locked THEN
      SELECT k.*, k.xmin AS row_xmin INTO r FROM idem.keys k
       WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest;
      v_found := FOUND;
    ELSE
      -- Under the key's lock, also lock the row, but never wait for it: the only other row
      -- locker is purge_expired (it does not take the key's lock, so polling for it is safe).
      SELECT k.*, k.xmin AS row_xmin INTO r FROM idem.keys k
       WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest
         FOR NO KEY UPDATE SKIP LOCKED;
      v_found := FOUND;
      IF NOT v_found THEN
        PERFORM 1 FROM idem.keys k WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest;
        v_busy := FOUND;
        v_can_wait := true;
      END IF;
    END IF;
    v_now := clock_timestamp();

    IF v_found AND r.status = 'resolved' AND r.expires_at > v_now THEN
      -- Resolved records never change until they expire: no lock needed to answer.
      res.generation := r.generation;
      IF r.payload_hash <> p_hash THEN
        res.outcome := 'mismatch';
        RETURN res;
      END IF;
      res.outcome := 'replay';
      res.order_id := r.order_id;
      res.response_status := r.response_status;
      res.response_headers := r.response_headers;
      res.response_body := r.response_body;
      RETURN res;
    END IF;

    IF v_found AND r.status = 'in_progress' THEN
      -- A live lease is busy; so is one this very transaction holds, expired or not (a batch
      -- meeting the same key twice is still executing it: never a takeover of itself). Waiting
      -- never helps our own lease, nor any lease while we hold the key's lock (its holder needs it).
      v_own := idem._written_by_current_transaction(r.row_xmin);
      v_busy := v_own OR r.lease_expires_at > v_now;
      v_can_wait := NOT v_own AND NOT v_locked;
    END IF;

    IF v_busy THEN
      -- Only READ COMMITTED sees the holder finish (a new snapshot per statement).
      IF p_on_busy = 'wait' AND v_read_committed AND v_can_wait THEN
        PERFORM pg_sleep(v_poll);
        v_poll := least(v_poll * 2, 0.1);
        CONTINUE;
      END IF;
      res.outcome := 'in_progress';
      res.generation := r.generation;
      res.retry_after := idem._retry_after();
      RETURN res;
    END IF;

    -- Work that must resume (an expired lease, or a release after a checkpoint) is never handed
    -- to another payload. Decided before taking the lock, so a refused caller holds nothing.
    IF v_found AND (r.status = 'in_progress' OR (r.status = 'released' AND r.recovery_point IS NOT NULL))
       AND r.payload_hash <> p_hash THEN
      res.outcome := 'mismatch';
      res.generation := r.generation;
      RETURN res;
    END IF;

    -- Absent, released, expired, or an expired lease: the key needs a write. Take its lock,
    -- then (for an existing row) read again: under READ COMMITTED the new read sees whatever the
    -- last holder committed. An absent row goes straight to the insert, whose ON CONFLICT
    -- notices a row committed in between.
    IF NOT v_locked THEN
      IF pg_try_advisory_xact_lock(v_lock) THEN
        v_locked := true;
      ELSIF p_on_busy = 'wait' THEN
        PERFORM pg_advisory_xact_lock(v_lock);
        v_locked := true;
        CONTINUE;  -- we waited for a holder: see what it left
      ELSE
        -- Held by an open transaction (its row may not even be visible to us yet).
        res.outcome := 'in_progress';
        res.retry_after := idem._retry_after();
        RETURN res;
      END IF;
      IF v_found THEN CONTINUE; END IF;
    END IF;

    IF NOT v_found THEN
      INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash,
                                  hash_scheme, caller_id, resource, client_key, lease_interval, ttl,
                                  lease_expires_at, created_at)
      VALUES (p_tenant, p_digest, 'in_progress', nextval('idem.fencing_token_seq'), 1, p_hash, idem.fingerprint_scheme(), p_caller,
              p_resource, p_key, v_lease, v_ttl, v_now + v_lease, v_now)
      ON CONFLICT DO NOTHING
      RETURNING k.attempt, k.generation INTO res.attempt, res.generation;
      IF NOT FOUND THEN
        -- A row committed after our read. READ COMMITTED: read it and decide again. An older
        -- snapshot (REPEATABLE READ and up) gets 40001 from PostgreSQL before this point, or here.
        IF v_read_committed THEN CONTINUE; END IF;
        RAISE EXCEPTION 'could not serialize acquisition of an idempotency key: another transaction created it'
          USING ERRCODE = '40001', HINT = 'Retry the transaction.';
      END IF;
      res.outcome := 'acquired';
    ELSIF r.status = 'in_progress' OR r.recovery_point IS NOT NULL THEN
      -- An expired lease, or a release after progress was checkpointed: take over with a new
      -- fencing token, at the last recovery point (the handler verifies the side effect).
      UPDATE idem.keys k SET status = 'in_progress', attempt = nextval('idem.fencing_token_seq'),
             lease_interval = v_lease, ttl = v_ttl, lease_expires_at = v_now + v_lease,
             expires_at = NULL
       WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest AND k.attempt = r.attempt AND k.status = r.status
      RETURNING k.attempt, k.generation, k.recovery_point, k.recovery_data
           INTO res.attempt, res.generation, res.recovery_point, res.recovery_data;
      IF NOT FOUND THEN CONTINUE; END IF;  -- changed under READ COMMITTED: decide again
      res.outcome := 'resumed';
    ELSE
      -- Released before any checkpoint (a transient failure: fresh attempt) or expired (a new generation).
      UPDATE idem.keys k SET
          status = 'in_progress', attempt = nextval('idem.fencing_token_seq'),
          generation = k.generation + CASE WHEN k.status = 'resolved' THEN 1 ELSE 0 END,
          payload_hash = p_hash, hash_scheme = idem.fingerprint_scheme(), caller_id = p_caller,
          resource = p_resource, client_key = p_key, lease_interval = v_lease, ttl = v_ttl,
          lease_expires_at = v_now + v_lease, recovery_point = NULL, recovery_data = NULL,
          response_status = NULL, response_headers = NULL, response_body = NULL, order_id = NULL,
          handler_response = NULL, last_error = NULL,
          created_at = CASE WHEN k.status = 'resolved' THEN v_now ELSE k.created_at END,
          resolved_at = NULL, expires_at = NULL
       WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest AND k.attempt = r.attempt AND k.status = r.status
      RETURNING k.attempt, k.generation INTO res.attempt, res.generation;
      IF NOT FOUND THEN CONTINUE; END IF;  -- purged or changed under READ COMMITTED: decide again
      res.outcome := 'acquired';
    END IF;
    RETURN res;
  END LOOP;
END $$;
REVOKE ALL ON FUNCTION idem._acquire(text, bytea, text, bytea, text, text, interval, interval, text) FROM PUBLIC;

CREATE FUNCTION idem.acquire(tenant text, key text, payload jsonb, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF payload IS NULL THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: payload must not be NULL' USING ERRCODE = 'IK012',
      HINT = 'Pass the request body; use ''{}'' or ''null'' for a request without one.';
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       idem.payload_hash(payload), caller, resource, lease, ttl, on_busy);
END $$;
COMMENT ON FUNCTION idem.acquire(text, text, jsonb, text, text, interval, interval, text) IS
  'Start (acquired), take over (resumed), replay, refuse (in_progress) or reject (mismatch) a mutation under an idempotency key.';

CREATE FUNCTION idem.acquire(tenant text, key text, payload text, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF payload IS NULL THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: payload must not be NULL' USING ERRCODE = 'IK012',
      HINT = 'Pass the request body; use ''{}'' or ''null'' for a request without one.';
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       idem.payload_hash(payload), caller, resource, lease, ttl, on_busy);
END $$;
COMMENT ON FUNCTION idem.acquire(text, text, text, text, text, interval, interval, text) IS
  'acquire with the payload as JSON text, parsed strictly (duplicate keys refused).';

CREATE FUNCTION idem.acquire(tenant text, key text, payload_hash bytea, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF payload_hash IS NULL OR octet_length(payload_hash) <> 32 THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: payload_hash must be the 32-byte SHA-256 fingerprint, got % bytes',
      coalesce(octet_length(payload_hash)::text, 'NULL') USING ERRCODE = 'IK012',
      HINT = 'Compute it with idem.payload_hash() or the client library (same scheme, same bytes).';
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       payload_hash, caller, resource, lease, ttl, on_busy);
END $$;
COMMENT ON FUNCTION idem.acquire(text, text, bytea, text, text, interval, interval, text) IS
  'acquire with a precomputed fingerprint (scheme idem.fingerprint_scheme()), so a client can send 32 bytes instead of the payload.';
-- checkpoint / complete / release: what the holder of a lease may do, fenced by its attempt number.
-- A holder whose lease was taken over (a newer attempt) gets ERR_LEASE_LOST and changes nothing.

-- Locks the key for a holder and returns its row if `attempt` still holds the lease.
-- Blocking is right here: the only other lock holders are acquirers deciding in milliseconds.
CREATE FUNCTION idem._holder_row(p_handle text, p_attempt bigint, p_action text)
  RETURNS idem.keys
  -- Called only by checkpoint/complete/release, which run as the owner with a safe search_path.
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_digest bytea := idem._handle_digest(p_handle);
  v_tenant text := idem._handle_tenant(p_handle);
  r idem.keys;
BEGIN
  IF p_attempt IS NULL THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: attempt must not be NULL' USING ERRCODE = 'IK012',
      HINT = 'Pass the attempt column of the acquire result with the handle.';
  END IF;
  PERFORM pg_advisory_xact_lock(idem._lock_key(v_digest));
  SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant AND k.scope_digest = v_digest;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ERR_LEASE_LOST: cannot % key %: no such record (expired and purged, or never acquired)', p_action, p_handle
      USING ERRCODE = 'IK005', HINT = 'Do not record a result; acquire the key again.';
  END IF;
  IF r.status <> 'in_progress' OR r.attempt <> p_attempt THEN
    RAISE EXCEPTION 'ERR_LEASE_LOST: cannot % key % with attempt %: the record is % at attempt %', p_action, p_handle, p_attempt, r.status, r.attempt
      USING ERRCODE = 'IK005',
            HINT = 'Another attempt took over this key (or it was already resolved); do not record a result.';
  END IF;
  RETURN r;
END $$;
REVOKE ALL ON FUNCTION idem._holder_row(text, bigint, text) FROM PUBLIC;

CREATE FUNCTION idem.checkpoint(handle text, attempt bigint, recovery_point text, data jsonb DEFAULT NULL)
  RETURNS timestamptz
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.keys;
  v_expires timestamptz;
BEGIN
  IF recovery_point IS NULL OR recovery_point = '' THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: recovery_point must be a non-empty name such as ''charge_created''' USING ERRCODE = 'IK012';
  END IF;
  -- A lost checkpoint would resume from an older recovery point and repeat a side effect.
  PERFORM idem._require_durable_store();
  r := idem._holder_row(handle, attempt, 'checkpoint');
  v_expires := clock_timestamp() + r.lease_interval;
  UPDATE idem.keys k SET recovery_point = checkpoint.recovery_point, recovery_data = data, lease_expires_at = v_expires
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  RETURN v_expires;
END $$;
COMMENT ON FUNCTION idem.checkpoint(text, bigint, text, jsonb) IS
  'Record progress (e.g. charge_created with the processor''s charge id) and extend the lease; returns the new lease expiry.';

CREATE FUNCTION idem.complete(handle text, attempt bigint, status integer, headers jsonb, body bytea,
                              order_id text DEFAULT NULL, handler_response jsonb DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  IF status IS NULL OR status NOT BETWEEN 100 AND 599 THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: status must be an HTTP status code 100..599, got %', coalesce(status::text, 'NULL')
      USING ERRCODE = 'IK012';
  END IF;
  IF headers IS NOT NULL AND jsonb_typeof(headers) <> 'object' THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: headers must be a JSON object of header names to values, got a JSON %', jsonb_typeof(headers)
      USING ERRCODE = 'IK012';
  END IF;
  PERFORM idem._require_durable_store();
  r := idem._holder_row(handle, attempt, 'complete');
  v_now := clock_timestamp();
  UPDATE idem.keys k SET status = 'resolved', response_status = complete.status,
         response_headers = coalesce(headers, '{}'::jsonb), response_body = coalesce(body, ''::bytea),
         order_id = complete.order_id, handler_response = complete.handler_response,
         lease_expires_at = NULL, resolved_at = v_now, expires_at = v_now + k.ttl
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
END $$;
COMMENT ON FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb) IS
  'Resolve the key with the response to replay (in the caller''s transaction, with the business write). Stale attempt: ERR_LEASE_LOST.';

CREATE FUNCTION idem.release(handle text, attempt bigint, error text DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  r := idem._holder_row(handle, attempt, 'release');
  v_now := clock_timestamp();
  -- The row stays (as released) until purge, so forensics see the failed attempt and its error.
  UPDATE idem.keys k SET status = 'released', last_error = error, lease_expires_at = NULL,
         expires_at = v_now + k.ttl
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
END $$;
COMMENT ON FUNCTION idem.release(text, bigint, text) IS
  'Give the key back after a transient failure (5xx, timeout): the next request with it is a fresh attempt, or resumes at the last checkpoint if there is one.';
-- Retention: expired records leave in small batches. SKIP LOCKED passes over any row an acquirer
-- is working on, and each batch is its own short statement, so purge never stalls the hot path.

CREATE FUNCTION idem.purge_expired(batch integer DEFAULT 1000)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_removed integer;
BEGIN
  IF batch IS NULL OR batch < 1 OR batch > 100000 THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: batch must be 1..100000, got %', coalesce(batch::text, 'NULL')
      USING ERRCODE = 'IK012', HINT = 'Call purge_expired repeatedly with a small batch until it returns 0.';
  END IF;
  WITH victims AS (
    SELECT k.tenant_id, k.scope_digest FROM idem.keys k
     WHERE k.expires_at < clock_timestamp()
     ORDER BY k.expires_at
     LIMIT batch
       FOR UPDATE SKIP LOCKED
  )
  DELETE FROM idem.keys k USING victims v
   WHERE k.tenant_id = v.tenant_id AND k.scope_digest = v.scope_digest;
  GET DIAGNOSTICS v_removed = ROW_COUNT;
  RETURN v_removed;
END $$;
COMMENT ON FUNCTION idem.purge_expired(integer) IS
  'Delete up to batch expired records (resolved or released, past expires_at); returns how many. Call until 0.';
-- Privileges: services execute functions and never write tables; auditors read.
-- Roles are cluster-wide, so another database's CREATE EXTENSION may have made them already.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'idem_service') THEN
    CREATE ROLE idem_service NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'idem_auditor') THEN
    CREATE ROLE idem_auditor NOLOGIN;
  END IF;
END $$;

REVOKE ALL ON ALL TABLES IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA idem FROM PUBLIC;
GRANT USAGE ON SCHEMA idem TO idem_service, idem_auditor;

-- Pure functions stay usable by anyone with schema usage: they read and write nothing.
GRANT EXECUTE ON FUNCTION idem.canonical_json(text), idem.canonical_json(jsonb),
  idem.payload_hash(jsonb, text[]), idem.payload_hash(text, text[]), idem.fingerprint_scheme(),
  idem.fingerprint(jsonb, text[]), idem.fingerprint(text, text[]),
  idem.validate_key(text), idem.scope_digest(text, text, text, text)
  TO idem_service, idem_auditor;

GRANT EXECUTE ON FUNCTION
  idem.acquire(text, text, jsonb, text, text, interval, interval, text),
  idem.acquire(text, text, text, text, text, interval, interval, text),
  idem.acquire(text, text, bytea, text, text, interval, interval, text),
  idem.checkpoint(text, bigint, text, jsonb),
  idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb),
  idem.release(text, bigint, text),
  idem.purge_expired(integer)
  TO idem_service;

GRANT SELECT ON ALL TABLES IN SCHEMA idem TO idem_auditor;
GRANT SELECT ON SEQUENCE idem.fencing_token_seq TO idem_auditor;
