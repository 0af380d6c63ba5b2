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
