CREATE OR REPLACE FUNCTION idem._acquire_general(p_tenant text, p_digest bytea, p_key text, p_hash bytea, p_caller text, p_resource text, p_lease interval, p_ttl interval, p_on_busy text, p_mutation_type text, p_payload_members bytea)
 RETURNS idem.acquire_result
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  r          record;   -- the key's row, with row_xmin: who wrote this version
  res        idem.acquire_result;
  v_lease    interval := idem._lease(p_lease);
  v_ttl      interval := idem._ttl(p_ttl);
  v_lock     bigint := idem._lock_key(p_digest);
  v_locked   boolean := false;
  v_found    boolean;
  v_own      boolean;
  v_decision text;
  v_now      timestamptz;
  v_wait     boolean;
  v_deadline timestamptz;
  v_poll     float8 := 0.002;
  v_retired  integer;
  v_secret   text := replace(gen_random_uuid()::text, '-', '');  -- 122 random bits, for a holder only
  v_differs  text[];   -- what sets this request apart from the key's first use, when another record owns it
  v_scope    text := coalesce(current_setting('idem.key_scope', true), 'tenant');
  v_owner_lock bigint := idem._owner_lock_key(p_tenant, p_key);
  v_owner_locked boolean := false;
  v_attempt  bigint;   -- a takeover's or a new generation's fencing token
  v_expires  timestamptz;
BEGIN
  PERFORM idem._require_tenant(p_tenant);
  IF p_on_busy IS NULL OR p_on_busy NOT IN ('reject', 'wait') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('on_busy must be ''reject'' or ''wait'', not %s', coalesce(quote_literal(p_on_busy), 'NULL')));
  END IF;
  IF p_mutation_type IS NULL OR p_mutation_type NOT IN ('create', 'capture', 'refund', 'void') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('mutation_type must be create, capture, refund or void, not %s', coalesce(quote_literal(p_mutation_type), 'NULL')));
  END IF;
  PERFORM idem._require_durable_store();
  -- Only READ COMMITTED can see a holder finish (a new snapshot per statement); an older snapshot
  -- answers at once rather than wait for a result it could not read.
  v_wait := p_on_busy = 'wait' AND current_setting('transaction_isolation') = 'read committed';
  -- Only a waiter needs a deadline (reject mode reads no setting for it).
  v_deadline := CASE WHEN v_wait THEN clock_timestamp() + idem._wait_timeout() END;
  res.handle := idem._handle(p_tenant, p_digest);

  LOOP
    SELECT k.status, k.attempt, k.generation, k.payload_hash, k.recovery_point, k.recovery_data,
           k.response_status, k.response_headers, k.response_body, k.order_id, k.lease_expires_at,
           k.expires_at, k.attempts_in_generation, k.mutation_type, k.payload_pinned, k.client_key,
           k.caller_id, k.resource, k.attempted_at, k.created_at, k.key_scope, k.payload_members, k.xmin AS row_xmin
      INTO r FROM idem.keys k
     WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest;
    v_found := FOUND;
    v_now := clock_timestamp();
    v_own := v_found AND r.status = 'in_progress' AND idem._written_by_current_transaction(r.row_xmin);
    IF v_found THEN
      -- The same request: the same fingerprint for the same kind of mutation (a refund under a
      -- capture's key and body is another request, refused like another body).
      v_decision := idem._decide(r.status, r.expires_at <= v_now, r.lease_expires_at > v_now, v_own,
                                 r.recovery_point IS NOT NULL,
                                 r.payload_hash = p_hash AND r.mutation_type = p_mutation_type, r.payload_pinned);
    ELSE
      v_decision := 'insert';
    END IF;

    IF v_decision IN ('replay', 'mismatch', 'busy') THEN
      IF v_locked THEN
        PERFORM idem._unlock_key(v_lock);
        v_locked := false;
      END IF;
      IF v_owner_locked THEN
        PERFORM idem._unlock_key(v_owner_lock);
        v_owner_locked := false;
      END IF;
      IF v_decision = 'busy' AND v_wait AND NOT v_own AND v_now < v_deadline THEN
        PERFORM pg_sleep(v_poll);
        v_poll := least(v_poll * 2, 0.05);
        CONTINUE;
      END IF;
      res.generation := r.generation;
      IF v_decision = 'replay' THEN
        res.outcome := 'replay';
        res.order_id := r.order_id;
        res.response_status := r.response_status;
        res.response_headers := r.response_headers;
        res.response_body := r.response_body;
      ELSIF v_decision = 'mismatch' THEN
        res.outcome := 'mismatch';
        -- Which members differ from the key's first request: pointers from both digest sets.
        res.key_reuse_differs := idem._payload_differs(r.payload_members, p_payload_members);
      ELSE
        res.outcome := 'in_progress';
        res.retry_after := idem._retry_after();
      END IF;
      -- A read-only transaction (a standby) still gets its answer, without the audit row it
      -- cannot write: a refusal executes nothing, so no mutation goes unlogged.
      IF (res.outcome <> 'replay' OR current_setting('idem.audit_replays')::boolean)
         AND NOT current_setting('transaction_read_only')::boolean THEN
        PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, r.generation, NULL, p_mutation_type,
                            res.outcome, false, r.order_id, NULL, NULL, NULL, NULL,
                            coalesce(r.attempts_in_generation, 0), v_now, NULL);
      END IF;
      RETURN res;
    END IF;

    -- The decision writes: take the key's lock without waiting, then read again under it (READ
    -- COMMITTED sees what the last writer committed). An absent row goes straight to the insert,
    -- whose ON CONFLICT notices a row committed in between.
    IF NOT v_locked THEN
      IF idem._try_lock_key(v_lock) THEN
        v_locked := true;
        IF v_found THEN CONTINUE; END IF;
      ELSIF v_wait AND idem._wait_for_key_lock(v_lock, v_deadline) THEN
        CONTINUE;  -- the writer's transaction ended: see what it left
      ELSE
        -- Another transaction is writing this key (its row may not even be visible to us yet).
        RETURN idem._answer_busy(res, p_tenant, p_digest, p_key, p_caller, p_resource, p_mutation_type,
                                 r.generation, coalesce(r.attempts_in_generation, 0));
      END IF;
    END IF;

    -- An existing row is locked before it is written, without waiting: under the key's lock only
    -- purge_expired can hold it (it is deleting a record that became history). Once locked it is
    -- written, so a refusal never follows a row lock.
    IF v_decision <> 'insert' THEN
      PERFORM 1 FROM idem.keys k WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest
         FOR NO KEY UPDATE SKIP LOCKED;
      IF NOT FOUND THEN
        PERFORM 1 FROM idem.keys k WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest;
        IF NOT FOUND THEN CONTINUE; END IF;  -- purged meanwhile: decide again (an insert)
        PERFORM idem._unlock_key(v_lock);
        IF v_owner_locked THEN PERFORM idem._unlock_key(v_owner_lock); END IF;
        RETURN idem._answer_busy(res, p_tenant, p_digest, p_key, p_caller, p_resource, p_mutation_type,
                                 r.generation, coalesce(r.attempts_in_generation, 0));
      END IF;
    END IF;

    -- Under the key scope tenant, a record that is to own its key (a new one, or a new generation
    -- of one that owned nothing) claims it first (0.3.6): no other record may own it, and no other
    -- transaction may be claiming it. The owner lock is held to the end of the transaction; a
    -- contender never waits in the owner index for a transaction that is still open.
    IF v_scope = 'tenant' AND (v_decision = 'insert'
                               OR (v_decision = 'new_generation' AND r.key_scope IS DISTINCT FROM 'tenant')) THEN
      v_differs := idem._key_owner_differs(p_tenant, p_digest, p_key, p_caller, p_resource);
      IF v_differs IS NOT NULL THEN
        RETURN idem._refuse_key_reused(res, p_tenant, p_digest, p_key, p_caller, p_resource, p_mutation_type,
                                       v_differs, v_lock, CASE WHEN v_owner_locked THEN v_owner_lock END);
      END IF;
      IF NOT v_owner_locked THEN
        IF idem._try_lock_key(v_owner_lock) THEN
          v_owner_locked := true;
          CONTINUE;  -- decide again under it: an owner may have committed before we took it
        ELSIF v_wait AND idem._wait_for_key_lock(v_owner_lock, v_deadline) THEN
          CONTINUE;
        END IF;
        -- Another transaction is claiming this key for another caller or route.
        PERFORM idem._unlock_key(v_lock);
        RETURN idem._answer_busy(res, p_tenant, p_digest, p_key, p_caller, p_resource, p_mutation_type,
                                 r.generation, coalesce(r.attempts_in_generation, 0));
      END IF;
    END IF;

    IF v_decision = 'insert' THEN
      v_retired := coalesce((SELECT g.generation FROM idem.retired_keys g
                              WHERE g.tenant_id = p_tenant AND g.scope_digest = p_digest), 0);
      -- A snapshot older than a purge of this key would start an old generation again (its
      -- record is gone, so the insert meets no conflict): refuse it as PostgreSQL refuses any
      -- write such a snapshot cannot see the result of.
      IF current_setting('transaction_isolation') <> 'read committed'
         AND idem._retired_generation_now(p_tenant, p_digest) <> v_retired THEN
        RAISE EXCEPTION 'could not serialize acquisition of an idempotency key: it was purged after this transaction''s snapshot'
          USING ERRCODE = 'serialization_failure', HINT = 'Retry the transaction.';
      END IF;
      INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash,
                                  hash_scheme, caller_id, resource, client_key, lease_interval, ttl,
                                  lease_expires_at, created_at, expires_at, mutation_type, attempted_at,
                                  attempts_in_generation, lease_secret_hash, payload_members)
      VALUES (p_tenant, p_digest, 'in_progress', nextval('idem.fencing_token_seq'), 1 + v_retired,
              p_hash, idem.fingerprint_scheme(), p_caller, p_resource, p_key, v_lease, v_ttl,
              v_now + v_lease, v_now, v_now + v_lease + v_ttl, p_mutation_type, v_now, 1,
              sha256(convert_to(v_secret, 'UTF8')), p_payload_members)
      ON CONFLICT DO NOTHING
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN
        -- A row committed after our read: this key's, or (the key scope tenant) another record's
        -- that owns the key. READ COMMITTED: read it and decide again, still holding the locks (a
        -- refusal gives them back; the claim above names an owner). An older snapshot cannot see
        -- it: 40001.
        IF current_setting('transaction_isolation') = 'read committed' THEN CONTINUE; END IF;
        RAISE EXCEPTION 'could not serialize acquisition of an idempotency key: another transaction created it'
          USING ERRCODE = 'serialization_failure', HINT = 'Retry the transaction.';
      END IF;
      res.outcome := 'acquired';
    ELSIF v_decision = 'resume' THEN
      -- Take over at the last recovery point with a new fencing token; the handler verifies the
      -- side effect the recovery point names before repeating anything.
      -- The token is drawn first: Citus refuses a VOLATILE function inside an UPDATE of a
      -- distributed table (a token lost to a retry of the loop is a gap, as a rolled-back one).
      v_attempt := nextval('idem.fencing_token_seq');
      v_expires := v_now + v_lease + v_ttl;
      UPDATE idem.keys k SET status = 'in_progress', attempt = v_attempt,
             lease_interval = v_lease, ttl = v_ttl, lease_expires_at = v_now + v_lease,
             -- Computed here: Citus allows no STABLE operator inside a CASE of a distributed UPDATE.
             expires_at = CASE WHEN k.recovery_point IS NULL THEN v_expires END,
             attempted_at = v_now, attempts_in_generation = k.attempts_in_generation + 1,
             lease_secret_hash = sha256(convert_to(v_secret, 'UTF8')),
             -- The attempt taken over may have called the handler: its payload stays the key's.
             payload_pinned = k.payload_pinned OR k.status = 'in_progress'
       WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.recovery_point, k.recovery_data, k.lease_expires_at
           INTO res.attempt, res.generation, res.recovery_point, res.recovery_data, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'resumed';
    ELSE
      -- new_generation: the record is history. fresh_attempt: released before any checkpoint
      -- (its payload_pinned stays: the decision let only the pinned payload through).
      v_attempt := nextval('idem.fencing_token_seq');  -- drawn first, as above
      UPDATE idem.keys k SET
          status = 'in_progress', attempt = v_attempt,
          generation = k.generation + CASE WHEN v_decision = 'new_generation' THEN 1 ELSE 0 END,
          payload_hash = p_hash, payload_members = p_payload_members, hash_scheme = idem.fingerprint_scheme(), caller_id = p_caller,
          resource = p_resource, client_key = p_key, lease_interval = v_lease, ttl = v_ttl,
          lease_expires_at = v_now + v_lease, recovery_point = NULL, recovery_data = NULL,
          response_status = NULL, response_headers = NULL, response_body = NULL, order_id = NULL,
          handler_response = NULL, last_error = NULL,
          created_at = CASE WHEN v_decision = 'new_generation' THEN v_now ELSE k.created_at END,
          resolved_at = NULL, expires_at = v_now + v_lease + v_ttl, mutation_type = p_mutation_type,
          local_status = NULL, attempted_at = v_now,
          attempts_in_generation = CASE WHEN v_decision = 'new_generation' THEN 1 ELSE k.attempts_in_generation + 1 END,
          lease_secret_hash = sha256(convert_to(v_secret, 'UTF8')),
          payload_pinned = v_decision <> 'new_generation' AND k.payload_pinned,
          -- A new generation under the key scope tenant owns its key (claimed above).
          key_scope = CASE WHEN v_decision = 'new_generation' AND v_scope = 'tenant' THEN 'tenant' ELSE k.key_scope END
       WHERE k.tenant_id = p_tenant AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'acquired';
    END IF;
    -- A lease that ran out without complete or release: its attempt goes on the record now, in
    -- this transaction (a holder that called the processor and died leaves a trace).
    IF v_found AND r.status = 'in_progress' THEN
      PERFORM idem._audit_abandoned(p_tenant, p_digest, r.client_key, r.caller_id, r.resource, r.generation,
                                    r.attempt, r.mutation_type, r.recovery_point, r.recovery_data,
                                    r.attempts_in_generation, coalesce(r.attempted_at, r.created_at),
                                    r.lease_expires_at, res.attempt);
    END IF;
    -- The holder's handle carries the lease's secret (core/keys/handle.hpp); the record keeps
    -- only its SHA-256, so neither auditors nor a guessed fencing token can use the lease.
    res.handle := res.handle || ':' || v_secret;
    res.handler_key := idem._handler_key(p_digest, res.generation);
    RETURN res;
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem._acquire_general(text,bytea,text,bytea,text,text,interval,interval,text,text,bytea) IS 'The reference the idem.acquire overloads hand every call to that is not a new key, a replay or a refusal without a wait.';
REVOKE ALL ON FUNCTION idem._acquire_general(text,bytea,text,bytea,text,text,interval,interval,text,text,bytea) FROM PUBLIC;
