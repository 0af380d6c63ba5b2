-- pg_idempotency 0.3.0 -> 0.3.1: tenant binding, lease secrets, row-level security, pinned
-- search paths (issue 12, "Tenant binding and least privilege"; docs/security.md).
--
-- * Roles can be bound to tenants (idem.bind_tenant / idem.unbind_tenant, by an operator). A
--   session whose login role is, or is a member of, a bound role acts only for those tenants:
--   acquire, checkpoint, complete, release, handler_key and emit for another tenant raise
--   ERR_TENANT_FORBIDDEN and change nothing. Unbound roles (and superusers) act for all tenants,
--   as before.
-- * acquire gives a holder a handle with the lease's secret ("<handle>:<32 hex>"); checkpoint,
--   complete and release require it, so a fencing token guessed from the global sequence cannot
--   act on another caller's lease. Callers pass the handle back unchanged, as they always did.
-- * Every table of ours has FORCE ROW LEVEL SECURITY: the extension's owner (whose SECURITY
--   DEFINER functions do all writes) sees everything; auditors and operators read only their
--   bound tenants' rows (all of them when unbound).
-- * Every SQL and PL/pgSQL function of ours pins search_path, so a caller's hostile schemas and
--   overloads change nothing.
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.3.1'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- Lease secrets.

ALTER TABLE idem.keys ADD COLUMN lease_secret_hash bytea;  -- SHA-256 of the holder's secret
COMMENT ON COLUMN idem.keys.lease_secret_hash IS
  'SHA-256 of the secret in the handle acquire gave the current holder; NULL for leases taken before 0.3.1.';

CREATE FUNCTION idem._handle_secret(handle text) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_handle_secret'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._handle_secret(text) IS
  'The lease secret a holder''s handle carries, NULL for a plain handle; ERR_ARGUMENT_INVALID for anything acquire did not return.';

-- ---------------------------------------------------------------------------------------------
-- Tenant binding.

CREATE TABLE idem.tenant_bindings (
  role_name  name NOT NULL,
  tenant_id  text COLLATE "C" NOT NULL,
  bound_by   name NOT NULL,
  bound_at   timestamptz NOT NULL,
  PRIMARY KEY (role_name, tenant_id)
);
COMMENT ON TABLE idem.tenant_bindings IS
  'Roles bound to tenants: a session whose login role is, or is a member of, a bound role acts and reads only for those tenants.';

-- The tenants the session is bound to, or NULL when it is unbound (no binding applies to its
-- login role, or it is a superuser). session_user, not current_user: inside our SECURITY
-- DEFINER functions current_user is the owner, and a binding is about who logged in.
CREATE FUNCTION idem._session_tenants() RETURNS text[]
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN r.rolsuper THEN NULL
              ELSE (SELECT array_agg(DISTINCT b.tenant_id) FROM idem.tenant_bindings b
                      JOIN pg_catalog.pg_roles br ON br.rolname = b.role_name
                     WHERE pg_catalog.pg_has_role(r.oid, br.oid, 'MEMBER')) END
    FROM pg_catalog.pg_roles r WHERE r.rolname = session_user $$;

CREATE FUNCTION idem._tenant_visible(p_tenant text) RETURNS boolean
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_bound text[];
BEGIN
  -- Without any binding nobody is bound: one index probe, nothing else.
  IF NOT EXISTS (SELECT 1 FROM idem.tenant_bindings) THEN RETURN true; END IF;
  v_bound := idem._session_tenants();
  RETURN v_bound IS NULL OR p_tenant = ANY (v_bound);
END $$;
COMMENT ON FUNCTION idem._tenant_visible(text) IS
  'Whether the session may act for and read tenant: true when it is unbound or bound to it.';

CREATE FUNCTION idem._require_tenant(p_tenant text) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT idem._tenant_visible(p_tenant) THEN
    PERFORM idem._raise('ERR_TENANT_FORBIDDEN',
      format('role %s is bound to tenants %s, not %s', session_user,
             array_to_string(idem._session_tenants(), ', '), coalesce(quote_literal(p_tenant), 'NULL')),
      'An operator binds roles to tenants with idem.bind_tenant(role, tenant); act only for your own tenants.');
  END IF;
END $$;

CREATE FUNCTION idem.bind_tenant(role name, tenant text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF role IS NULL OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = role) THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  IF tenant IS NULL OR tenant = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must be a non-empty tenant id');
  END IF;
  PERFORM idem._require_tenant(tenant);  -- a bound operator binds only within its own tenants
  INSERT INTO idem.tenant_bindings (role_name, tenant_id, bound_by, bound_at)
    VALUES (role, tenant, session_user, clock_timestamp()) ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION idem.bind_tenant(name, text) IS
  'Binds role to tenant (true; false when it already was): sessions of that role, or of its members, act and read only for their bound tenants.';

CREATE FUNCTION idem.unbind_tenant(role name, tenant text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM idem._require_tenant(tenant);
  DELETE FROM idem.tenant_bindings b WHERE b.role_name = role AND b.tenant_id = tenant COLLATE "C";
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION idem.unbind_tenant(name, text) IS
  'Removes one binding (true when there was one). A role left with no binding acts for every tenant again.';

-- ---------------------------------------------------------------------------------------------
-- The calls that name a tenant check it; the holder's calls also check the lease's secret.

CREATE OR REPLACE FUNCTION idem._acquire(p_tenant text, p_digest bytea, p_key text, p_hash bytea,
                              p_caller text, p_resource text, p_lease interval, p_ttl interval,
                              p_on_busy text, p_mutation_type text)
  RETURNS idem.acquire_result
  -- Called only by the idem.acquire overloads, which run as the owner with a safe search_path
  -- and enable_seqscan off (a primary-key lookup must not follow the planner's size estimate).
  LANGUAGE plpgsql VOLATILE AS $$
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
           k.expires_at, k.attempts_in_generation, k.mutation_type, k.xmin AS row_xmin
      INTO r FROM idem.keys k
     WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest;
    v_found := FOUND;
    v_now := clock_timestamp();
    v_own := v_found AND r.status = 'in_progress' AND idem._written_by_current_transaction(r.row_xmin);
    IF v_found THEN
      -- The same request: the same fingerprint for the same kind of mutation (a refund under a
      -- capture's key and body is another request, refused like another body).
      v_decision := idem._decide(r.status, r.expires_at <= v_now, r.lease_expires_at > v_now, v_own,
                                 r.recovery_point IS NOT NULL,
                                 r.payload_hash = p_hash AND r.mutation_type = p_mutation_type);
    ELSE
      v_decision := 'insert';
    END IF;

    IF v_decision IN ('replay', 'mismatch', 'busy') THEN
      IF v_locked THEN
        PERFORM idem._unlock_key(v_lock);
        v_locked := false;
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
        res.outcome := 'in_progress';
        res.generation := r.generation;
        res.retry_after := idem._retry_after();
        IF NOT current_setting('transaction_read_only')::boolean THEN
          PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, r.generation, NULL, p_mutation_type,
                              'in_progress', false, NULL, NULL, NULL, NULL, NULL,
                              coalesce(r.attempts_in_generation, 0), clock_timestamp(), NULL);
        END IF;
        RETURN res;
      END IF;
    END IF;

    -- An existing row is locked before it is written, without waiting: under the key's lock only
    -- purge_expired can hold it (it is deleting a record that became history). Once locked it is
    -- written, so a refusal never follows a row lock.
    IF v_decision <> 'insert' THEN
      PERFORM 1 FROM idem.keys k WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest
         FOR NO KEY UPDATE SKIP LOCKED;
      IF NOT FOUND THEN
        PERFORM 1 FROM idem.keys k WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest;
        IF NOT FOUND THEN CONTINUE; END IF;  -- purged meanwhile: decide again (an insert)
        PERFORM idem._unlock_key(v_lock);
        res.outcome := 'in_progress';
        res.generation := r.generation;
        res.retry_after := idem._retry_after();
        IF NOT current_setting('transaction_read_only')::boolean THEN
          PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, r.generation, NULL, p_mutation_type,
                              'in_progress', false, NULL, NULL, NULL, NULL, NULL,
                              coalesce(r.attempts_in_generation, 0), clock_timestamp(), NULL);
        END IF;
        RETURN res;
      END IF;
    END IF;

    IF v_decision = 'insert' THEN
      v_retired := coalesce((SELECT g.generation FROM idem.retired_keys g
                              WHERE g.tenant_id = p_tenant COLLATE "C" AND g.scope_digest = p_digest), 0);
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
                                  attempts_in_generation, lease_secret_hash)
      VALUES (p_tenant, p_digest, 'in_progress', nextval('idem.fencing_token_seq'), 1 + v_retired,
              p_hash, idem.fingerprint_scheme(), p_caller, p_resource, p_key, v_lease, v_ttl,
              v_now + v_lease, v_now, v_now + v_lease + v_ttl, p_mutation_type, v_now, 1,
              sha256(convert_to(v_secret, 'UTF8')))
      ON CONFLICT DO NOTHING
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN
        -- A row committed after our read. READ COMMITTED: read it and decide again (still holding
        -- the lock, given back if the decision refuses). An older snapshot cannot see it: 40001.
        IF current_setting('transaction_isolation') = 'read committed' THEN CONTINUE; END IF;
        RAISE EXCEPTION 'could not serialize acquisition of an idempotency key: another transaction created it'
          USING ERRCODE = 'serialization_failure', HINT = 'Retry the transaction.';
      END IF;
      res.outcome := 'acquired';
    ELSIF v_decision = 'resume' THEN
      -- Take over at the last recovery point with a new fencing token; the handler verifies the
      -- side effect the recovery point names before repeating anything.
      UPDATE idem.keys k SET status = 'in_progress', attempt = nextval('idem.fencing_token_seq'),
             lease_interval = v_lease, ttl = v_ttl, lease_expires_at = v_now + v_lease,
             expires_at = CASE WHEN k.recovery_point IS NULL THEN v_now + v_lease + v_ttl END,
             attempted_at = v_now, attempts_in_generation = k.attempts_in_generation + 1,
             lease_secret_hash = sha256(convert_to(v_secret, 'UTF8'))
       WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.recovery_point, k.recovery_data, k.lease_expires_at
           INTO res.attempt, res.generation, res.recovery_point, res.recovery_data, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'resumed';
    ELSE
      -- new_generation: the record is history. fresh_attempt: released before any checkpoint.
      UPDATE idem.keys k SET
          status = 'in_progress', attempt = nextval('idem.fencing_token_seq'),
          generation = k.generation + CASE WHEN v_decision = 'new_generation' THEN 1 ELSE 0 END,
          payload_hash = p_hash, hash_scheme = idem.fingerprint_scheme(), caller_id = p_caller,
          resource = p_resource, client_key = p_key, lease_interval = v_lease, ttl = v_ttl,
          lease_expires_at = v_now + v_lease, recovery_point = NULL, recovery_data = NULL,
          response_status = NULL, response_headers = NULL, response_body = NULL, order_id = NULL,
          handler_response = NULL, last_error = NULL,
          created_at = CASE WHEN v_decision = 'new_generation' THEN v_now ELSE k.created_at END,
          resolved_at = NULL, expires_at = v_now + v_lease + v_ttl, mutation_type = p_mutation_type,
          local_status = NULL, attempted_at = v_now,
          attempts_in_generation = CASE WHEN v_decision = 'new_generation' THEN 1 ELSE k.attempts_in_generation + 1 END,
          lease_secret_hash = sha256(convert_to(v_secret, 'UTF8'))
       WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'acquired';
    END IF;
    -- The holder's handle carries the lease's secret (core/keys/handle.hpp); the record keeps
    -- only its SHA-256, so neither auditors nor a guessed fencing token can use the lease.
    res.handle := res.handle || ':' || v_secret;
    RETURN res;
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION idem._holder_row(p_handle text, p_attempt bigint, p_action text)
  RETURNS idem.keys
  -- Called only by checkpoint/complete/release/resolve_stuck, which run as the owner with a safe search_path.
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_digest bytea := idem._handle_digest(p_handle);
  v_tenant text := idem._handle_tenant(p_handle);
  v_lock   bigint := idem._lock_key(v_digest);
  v_deadline timestamptz;
  v_secret text := idem._handle_secret(p_handle);
  r idem.keys;
BEGIN
  PERFORM idem._require_tenant(v_tenant);
  -- Messages name the record, never the secret (they reach logs).
  p_handle := idem._handle(v_tenant, v_digest);
  IF p_attempt IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'attempt must not be NULL',
      'Pass the attempt column of the acquire result with the handle.');
  END IF;
  WHILE NOT idem._try_lock_key(v_lock) LOOP
    SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant COLLATE "C" AND k.scope_digest = v_digest;
    EXIT WHEN NOT FOUND OR r.status <> 'in_progress' OR r.attempt <> p_attempt;  -- lost: said below
    IF r.lease_expires_at <= clock_timestamp() THEN
      PERFORM idem._raise('ERR_LEASE_LOST',
        format('cannot %s key %s with attempt %s: its lease ran out at %s and another attempt is taking it over',
               p_action, p_handle, p_attempt, r.lease_expires_at),
        'Do not record a result; the next request with this key resumes or replays.');
    END IF;
    -- Our lease is live: the lock's owner is a contender reading one row before it refuses, or
    -- another open (or prepared) transaction of this very lease. Wait for it, within bounds.
    v_deadline := coalesce(v_deadline, clock_timestamp() + idem._wait_timeout());
    IF NOT idem._wait_for_key_lock(v_lock, v_deadline) THEN
      PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS',
        format('cannot %s key %s with attempt %s now: another transaction is writing it (an earlier open or prepared transaction of this lease?)',
               p_action, p_handle, p_attempt),
        'The lease is still yours: finish or roll back that transaction, then call again.');
    END IF;
  END LOOP;
  -- Under the key's lock only purge_expired can hold the row (it is deleting history): never wait.
  SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant COLLATE "C" AND k.scope_digest = v_digest
     FOR NO KEY UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('cannot %s key %s: no such record (expired and purged or being purged, or never acquired)', p_action, p_handle),
      'Do not record a result; acquire the key again.');
  END IF;
  IF r.status <> 'in_progress' OR r.attempt <> p_attempt THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('cannot %s key %s with attempt %s: the record is %s at attempt %s', p_action, p_handle, p_attempt, r.status, r.attempt),
      'Another attempt took over this key (or it was already resolved); do not record a result.');
  END IF;
  -- Only the holder acquire answered knows the lease's secret (an operator's resolve_stuck acts
  -- without one). A lease taken before 0.3.1 has no secret to check.
  IF p_action <> 'resolve' AND r.lease_secret_hash IS NOT NULL
     AND (v_secret IS NULL OR sha256(convert_to(v_secret, 'UTF8')) <> r.lease_secret_hash) THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('cannot %s key %s with attempt %s: the handle does not carry this lease''s secret', p_action, p_handle, p_attempt),
      'Pass the handle column of the acquire result that leased the key, unchanged; only its holder may act on the lease.');
  END IF;
  RETURN r;
END $$;

CREATE OR REPLACE FUNCTION idem.handler_key(handle text) RETURNS text
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_generation integer;
BEGIN
  PERFORM idem._require_tenant(idem._handle_tenant(handle));
  SELECT k.generation INTO v_generation FROM idem.keys k
   WHERE k.tenant_id = idem._handle_tenant(handle) COLLATE "C" AND k.scope_digest = idem._handle_digest(handle);
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_LEASE_LOST', format('no record for key %s (expired and purged, or never acquired)',
                                        idem._handle(idem._handle_tenant(handle), idem._handle_digest(handle))),
      'Acquire the key first; pass the handle acquire returned.');
  END IF;
  RETURN idem._handler_key(idem._handle_digest(handle), v_generation);
END $$;

CREATE OR REPLACE FUNCTION idem.emit(tenant text, topic text, payload jsonb, key text DEFAULT NULL) RETURNS bigint
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_id bigint;
  v_txn bigint;
BEGIN
  PERFORM idem._require_tenant(tenant);  -- before the group is noted: a refused emit leaves nothing
  v_txn := idem._outbox_note(tenant, topic, key, payload);  -- tenant, key, payload size; the group
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_topics t WHERE t.topic = emit.topic) THEN
    PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN', format('no outbox topic %L', emit.topic),
      'Create it once with idem.create_topic(topic); topics are registered so a typo cannot emit into nowhere.');
  END IF;
  INSERT INTO idem.outbox_events (tenant_id, topic, txn_id, event_id, key, payload, emitted_at)
    VALUES (tenant, topic, v_txn, nextval('idem.outbox_seq'), key, payload, clock_timestamp())
    RETURNING event_id INTO v_id;
  RETURN v_id;
END $$;

CREATE OR REPLACE FUNCTION idem.resolve_stuck(handle text, attempt bigint, reason text, status integer,
                                   body bytea DEFAULT ''::bytea, headers jsonb DEFAULT '{}'::jsonb)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  -- The operator acts without the holder's secret; messages name the record, never a secret.
  handle := idem._handle(idem._handle_tenant(handle), idem._handle_digest(handle));
  IF reason IS NULL OR btrim(reason) = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'reason must say why the record is resolved by hand',
      'For example: ''charge ch_123 verified at the processor; refunded manually''.');
  END IF;
  IF status IS NULL OR status NOT BETWEEN 100 AND 599 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('status must be an HTTP status code 100..599, got %s', coalesce(status::text, 'NULL')));
  END IF;
  IF headers IS NULL OR jsonb_typeof(headers) <> 'object' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'headers must be a JSON object of header names to values');
  END IF;
  PERFORM idem._require_durable_store();
  SELECT * INTO r FROM idem.keys k
   WHERE k.tenant_id = idem._handle_tenant(handle) COLLATE "C" AND k.scope_digest = idem._handle_digest(handle);
  IF FOUND AND r.status = 'released' AND r.recovery_point IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: it was released before any checkpoint, and its next request is a fresh attempt', handle),
      'Only unfinished work with a checkpoint, or a lease that ran out, needs an operator.');
  END IF;
  IF FOUND AND r.status = 'released' THEN
    -- Released work has no holder: resolve it as if its last attempt did.
    attempt := coalesce(attempt, r.attempt);
    IF NOT idem._try_lock_key(idem._lock_key(r.scope_digest)) THEN
      PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS', format('key %s is being acquired right now', handle),
        'Look again in a moment: idem.resolve_stuck never waits.');
    END IF;
    SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest
       FOR NO KEY UPDATE NOWAIT;
    IF r.status <> 'released' OR r.attempt <> attempt THEN
      PERFORM idem._raise('ERR_LEASE_LOST', format('key %s moved on to attempt %s (%s)', handle, r.attempt, r.status),
        'Look at the record again before resolving it.');
    END IF;
  ELSE
    IF FOUND AND r.status = 'in_progress' AND r.lease_expires_at > clock_timestamp() THEN
      PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS',
        format('key %s is leased to attempt %s until %s', handle, r.attempt, r.lease_expires_at),
        'A live holder may still complete it; resolve only work whose lease has run out.');
    END IF;
    r := idem._holder_row(handle, attempt, 'resolve');
  END IF;
  v_now := clock_timestamp();
  UPDATE idem.keys k SET status = 'resolved', response_status = resolve_stuck.status,
         response_headers = headers, response_body = coalesce(body, ''::bytea),
         last_error = 'resolved by ' || session_user || ': ' || reason,
         lease_expires_at = NULL, resolved_at = v_now, expires_at = v_now + k.ttl
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  INSERT INTO idem.operator_actions (tenant_id, scope_digest, action, attempt, generation, recovery_point,
                                     recovery_data, response_status, reason, performed_by, performed_at)
  VALUES (r.tenant_id, r.scope_digest, 'resolve_stuck', r.attempt, r.generation, r.recovery_point,
          r.recovery_data, resolve_stuck.status, reason, session_user, v_now);
  PERFORM idem._audit_holder(r, 'resolved_by_operator', false, r.order_id, NULL, NULL,
                             'resolved by ' || session_user || ': ' || reason, v_now);
END $$;

CREATE OR REPLACE VIEW idem.stuck_leases AS
  SELECT k.tenant_id, k.client_key, k.caller_id, k.resource, idem._handle(k.tenant_id, k.scope_digest) AS handle,
         k.attempt, k.generation, k.status, k.recovery_point, k.recovery_data, k.lease_expires_at,
         k.last_error, k.attempted_at,
         CASE WHEN k.recovery_point IS NOT NULL THEN 'unresolved after a checkpoint: resumes, or idem.resolve_stuck'
              ELSE 'lease ran out, not taken over' END AS why
    FROM idem.keys k
   WHERE ((k.status = 'in_progress' AND k.lease_expires_at < clock_timestamp())
      OR (k.status = 'released' AND k.recovery_point IS NOT NULL))
     AND idem._tenant_visible(k.tenant_id);  -- the view reads as its owner: filter for the reader

-- ---------------------------------------------------------------------------------------------
-- Row-level security on every table of ours, forced for the owner too: the owner's policy lets
-- its SECURITY DEFINER functions do their work; readers see their bound tenants' rows.

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT c.oid::regclass AS rel,
                  EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                           WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS by_tenant
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'idem' AND c.relkind IN ('r', 'p')
  LOOP
    EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t.rel);
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t.rel);
    EXECUTE format('CREATE POLICY owner_all ON %s TO @extowner@ USING (true) WITH CHECK (true)', t.rel);
    IF t.by_tenant THEN
      EXECUTE format('CREATE POLICY read_own_tenants ON %s FOR SELECT TO idem_auditor, idem_operator'
                     ' USING (idem._tenant_visible(tenant_id))', t.rel);
    ELSE
      EXECUTE format('CREATE POLICY read_all ON %s FOR SELECT TO idem_auditor, idem_operator USING (true)', t.rel);
    END IF;
  END LOOP;
END $$;
-- The machines are configuration every caller of a transition check reads, and operators edit.
CREATE POLICY service_reads_machines ON idem.machine_states FOR SELECT TO idem_service USING (true);
CREATE POLICY service_reads_machines ON idem.machine_transitions FOR SELECT TO idem_service USING (true);
CREATE POLICY operator_edits_machines ON idem.machine_states FOR ALL TO idem_operator USING (true) WITH CHECK (true);
CREATE POLICY operator_edits_machines ON idem.machine_transitions FOR ALL TO idem_operator USING (true) WITH CHECK (true);

-- ---------------------------------------------------------------------------------------------
-- Every SQL and PL/pgSQL function of ours resolves names in pg_catalog only (C functions resolve
-- none): the forensic SQL functions used to run with the caller's search_path.

DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
             JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
             JOIN pg_catalog.pg_language l ON l.oid = p.prolang
            WHERE n.nspname = 'idem' AND l.lanname IN ('sql', 'plpgsql')
              AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%')
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
  END LOOP;
END $$;

-- ---------------------------------------------------------------------------------------------
-- Privileges: nothing of ours for PUBLIC; the new calls for their roles.

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA idem FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.bind_tenant(name, text), idem.unbind_tenant(name, text) TO idem_operator;
GRANT SELECT ON idem.tenant_bindings TO idem_auditor, idem_operator;
-- The read policies call it as the reader.
GRANT EXECUTE ON FUNCTION idem._tenant_visible(text) TO idem_auditor, idem_operator;
