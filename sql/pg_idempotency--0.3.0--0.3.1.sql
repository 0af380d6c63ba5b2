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

-- By role oid, not name: a renamed role keeps its bindings, and a role dropped and created again
-- under the same name does not inherit them (a dropped role's bindings match nobody).
CREATE TABLE idem.tenant_bindings (
  role_oid   oid NOT NULL,
  tenant_id  text COLLATE "C" NOT NULL,
  bound_by   name NOT NULL,
  bound_at   timestamptz NOT NULL,
  PRIMARY KEY (role_oid, tenant_id)
);
COMMENT ON TABLE idem.tenant_bindings IS
  'Roles (role_oid::regrole) bound to tenants: a session whose login role is, or is a member of, a bound role acts and reads only for those tenants.';

-- The tenants the session is bound to, or NULL when it is unbound (no binding applies to its
-- login role, or it is a superuser). session_user, not current_user: inside our SECURITY
-- DEFINER functions current_user is the owner, and a binding is about who logged in.
CREATE FUNCTION idem._session_tenants() RETURNS text[]
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN r.rolsuper THEN NULL
              ELSE (SELECT array_agg(DISTINCT b.tenant_id) FROM idem.tenant_bindings b
                      JOIN pg_catalog.pg_roles br ON br.oid = b.role_oid
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

-- An unbound operator manages every binding. A bound operator manages only roles already bound
-- within its own tenants: it cannot bind a role that is unbound (which acts for every tenant, so
-- binding it would cut off other tenants), a group role of ours, or a role whose bindings reach
-- outside its tenants, and it cannot remove a role's last binding (which would unbind it).
CREATE FUNCTION idem._require_manages_binding(p_role oid, p_tenant text, p_removing boolean) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_mine text[] := idem._session_tenants();
  v_theirs text[];
BEGIN
  IF v_mine IS NULL THEN RETURN; END IF;
  PERFORM idem._require_tenant(p_tenant);
  SELECT array_agg(b.tenant_id) INTO v_theirs FROM idem.tenant_bindings b WHERE b.role_oid = p_role;
  IF v_theirs IS NULL OR NOT v_theirs <@ v_mine
     OR p_role IN (SELECT r.oid FROM pg_catalog.pg_roles r
                    WHERE r.rolname IN ('idem_service', 'idem_consumer', 'idem_auditor', 'idem_operator'))
     OR (p_removing AND v_theirs <@ ARRAY[p_tenant]) THEN
    PERFORM idem._raise('ERR_TENANT_FORBIDDEN',
      format('role %s is bound to tenants %s: it may change only the bindings of roles bound within them, and not remove a role''s last one (role %s, tenant %L)',
             session_user, array_to_string(v_mine, ', '), p_role::regrole, p_tenant),
      'An unbound operator makes a role''s first binding and removes its last.');
  END IF;
END $$;

CREATE FUNCTION idem.bind_tenant(role name, tenant text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  IF tenant IS NULL OR tenant = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must be a non-empty tenant id');
  END IF;
  PERFORM idem._require_short_text(tenant, 'tenant');
  PERFORM idem._require_manages_binding(v_role, tenant, false);
  INSERT INTO idem.tenant_bindings (role_oid, tenant_id, bound_by, bound_at)
    VALUES (v_role, tenant, session_user, clock_timestamp()) ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION idem.bind_tenant(name, text) IS
  'Binds role to tenant (true; false when it already was): sessions of that role, or of its members, act and read only for their bound tenants.';

CREATE FUNCTION idem.unbind_tenant(role name, tenant text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  PERFORM idem._require_manages_binding(v_role, tenant, true);
  DELETE FROM idem.tenant_bindings b WHERE b.role_oid = v_role AND b.tenant_id = tenant COLLATE "C";
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION idem.unbind_tenant(name, text) IS
  'Removes one binding (true when there was one). A role left with no binding acts for every tenant again: only an unbound operator may remove the last one.';

-- Whether the session is unbound: what the maintenance calls acting on every tenant (purges, the
-- machines' configuration) require.
CREATE FUNCTION idem._session_unbound() RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT NOT EXISTS (SELECT 1 FROM idem.tenant_bindings) OR idem._session_tenants() IS NULL $$;

CREATE FUNCTION idem._require_unbound(p_action text) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT idem._session_unbound() THEN
    PERFORM idem._raise('ERR_TENANT_FORBIDDEN',
      format('role %s is bound to tenants %s; %s acts on every tenant', session_user,
             array_to_string(idem._session_tenants(), ', '), p_action),
      'Run it from an unbound role (a global operator or the maintenance job).');
  END IF;
END $$;

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
  -- The tenant is checked before anything is read: another tenant's record is not even probed.
  PERFORM idem._require_tenant(idem._handle_tenant(handle));
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

CREATE OR REPLACE FUNCTION idem._outbox_open_dead_letter(p_consumer text, p_event_id bigint) RETURNS idem.outbox_dead_letters
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  d idem.outbox_dead_letters;
BEGIN
  PERFORM idem._outbox_consumer(p_consumer);
  SELECT * INTO d FROM idem.outbox_dead_letters x
   WHERE x.consumer = p_consumer AND x.event_id = p_event_id AND x.resolved_at IS NULL FOR UPDATE;
  -- Another tenant's dead letter is not there for a bound operator: the same answer as none, so
  -- event ids (one global sequence) probe nothing.
  IF NOT FOUND OR NOT idem._tenant_visible(d.tenant_id) THEN
    PERFORM idem._raise('ERR_OUTBOX_EVENT_UNKNOWN',
      format('consumer %L has no open dead letter %s', p_consumer, coalesce(p_event_id::text, 'NULL')),
      'SELECT * FROM idem.outbox_dead_letters WHERE resolved_at IS NULL lists them.');
  END IF;
  IF d.claim_until > clock_timestamp() THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('dead letter %s of consumer %L is being replayed by a worker right now', p_event_id, p_consumer),
      'Wait for its ack or nack (or its visibility to pass).');
  END IF;
  RETURN d;
END $$;

-- Purges act on every tenant's history: unbound sessions only.
CREATE OR REPLACE FUNCTION idem.purge_expired(batch integer DEFAULT 1000)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  -- A deleted record's key stays locked until this transaction ends (an acquirer must not insert
  -- behind an uncommitted delete), so a call deletes at most this many: the shared lock table
  -- (max_locks_per_transaction x max_connections) must keep room for everyone else.
  c_max_keys constant integer := 500;
  c          record;
  v_lock     bigint;
  v_gen      integer;
  v_removed  integer := 0;
BEGIN
  PERFORM idem._require_unbound('purge_expired');
  IF batch IS NULL OR batch < 1 OR batch > 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')),
      'Call purge_expired repeatedly with a small batch until it returns 0.');
  END IF;
  -- Oldest history first, until the batch is full: keys in use are passed over, not counted, so
  -- a record held for long cannot starve the purge of the ones behind it.
  FOR c IN SELECT k.tenant_id, k.scope_digest FROM idem.keys k
            WHERE k.expires_at < clock_timestamp() ORDER BY k.expires_at LOOP
    EXIT WHEN v_removed >= least(batch, c_max_keys);
    v_lock := idem._lock_key(c.scope_digest);
    -- In use right now (also by this very transaction, whose lock is re-entrant): next time.
    CONTINUE WHEN idem._key_locked_by_me(v_lock) OR NOT idem._try_lock_key(v_lock);
    -- Under the key's lock nobody else writes the row, so this reads its latest committed
    -- version and deletes it only if that is still history; it never waits.
    DELETE FROM idem.keys k
     WHERE k.tenant_id = c.tenant_id AND k.scope_digest = c.scope_digest AND k.expires_at < clock_timestamp()
    RETURNING k.generation INTO v_gen;
    IF FOUND THEN
      INSERT INTO idem.retired_keys AS g (tenant_id, scope_digest, generation, retired_at)
      VALUES (c.tenant_id, c.scope_digest, v_gen, clock_timestamp())
      ON CONFLICT (tenant_id, scope_digest)
      DO UPDATE SET generation = greatest(g.generation, excluded.generation), retired_at = excluded.retired_at;
      v_removed := v_removed + 1;
    ELSE
      PERFORM idem._unlock_key(v_lock);  -- kept: the lock goes back at once
    END IF;
  END LOOP;
  -- Generations of keys unused for the whole history retention are forgotten, a batch at a time,
  -- each under its key's lock (an acquirer or another purge may be reading or writing it).
  FOR c IN SELECT o.tenant_id, o.scope_digest FROM idem.retired_keys o
            WHERE o.retired_at < clock_timestamp() - idem._history_retention()
            ORDER BY o.retired_at LIMIT least(batch, c_max_keys) LOOP
    v_lock := idem._lock_key(c.scope_digest);
    CONTINUE WHEN idem._key_locked_by_me(v_lock) OR NOT idem._try_lock_key(v_lock);
    DELETE FROM idem.retired_keys g
     WHERE g.tenant_id = c.tenant_id AND g.scope_digest = c.scope_digest
       AND g.retired_at < clock_timestamp() - idem._history_retention();
  END LOOP;
  RETURN v_removed;
END $$;

CREATE OR REPLACE FUNCTION idem.purge_audit(older_than interval DEFAULT '90 days', batch integer DEFAULT 10000)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_cutoff timestamptz;
  v_mutations integer;
  v_transitions integer;
BEGIN
  PERFORM idem._require_unbound('purge_audit');
  IF older_than IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'older_than must not be NULL');
  END IF;
  IF batch IS NULL OR batch < 1 OR batch > 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')),
      'Call purge_audit repeatedly until it returns 0.');
  END IF;
  -- The trail is evidence: an operator may age it out, not erase what is recent.
  IF idem._elapsed(older_than) < idem._min_audit_retention() THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('older_than (%s) is shorter than idem.min_audit_retention (%s)', idem._elapsed(older_than), idem._min_audit_retention()),
      'Keep the audit trail at least idem.min_audit_retention; a superuser may lower that setting.');
  END IF;
  v_cutoff := clock_timestamp() - idem._elapsed(older_than);
  PERFORM idem._allow_audit_purge(true);
  DELETE FROM idem.mutations m USING (
      SELECT o.tenant_id, o.mutation_id FROM idem.mutations o
       WHERE o.attempted_at < v_cutoff ORDER BY o.attempted_at LIMIT batch) old
   WHERE m.tenant_id = old.tenant_id AND m.mutation_id = old.mutation_id;
  GET DIAGNOSTICS v_mutations = ROW_COUNT;
  DELETE FROM idem.transition_log t USING (
      SELECT o.log_id FROM idem.transition_log o WHERE o.at < v_cutoff ORDER BY o.at LIMIT batch) old
   WHERE t.log_id = old.log_id;
  GET DIAGNOSTICS v_transitions = ROW_COUNT;
  PERFORM idem._allow_audit_purge(false);
  RETURN v_mutations + v_transitions;
END $$;

CREATE OR REPLACE FUNCTION idem.purge_outbox(older_than interval DEFAULT '7 days', batch integer DEFAULT 10000) RETURNS bigint
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  g record;
  v_cutoff timestamptz;
  v_consumers text[];
  v_safe bigint;
  v_txns bigint[];
  v_ids bigint[];
  v_n bigint := 0;
BEGIN
  PERFORM idem._require_unbound('purge_outbox');
  IF older_than IS NULL OR older_than < interval '0' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'older_than must be an elapsed time of 0 or more');
  END IF;
  IF batch IS NULL OR batch NOT BETWEEN 1 AND 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')));
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'purge_outbox runs in READ COMMITTED',
      'Its snapshot must see every consumer, including one created a moment ago.');
  END IF;
  -- A consumer registered while this runs would not be waited for: create_consumer waits for us
  -- (its INSERT needs ROW EXCLUSIVE), and every statement below sees those registered before.
  LOCK TABLE idem.outbox_subscriptions IN SHARE MODE;
  v_cutoff := clock_timestamp() - older_than;
  FOR g IN SELECT * FROM idem.outbox_groups ORDER BY tenant_id, topic LOOP
    EXIT WHEN v_n >= batch;
    SELECT array_agg(s.consumer) INTO v_consumers FROM idem.outbox_subscriptions s WHERE s.topic = g.topic;
    -- Whole transactions every consumer of the topic has acked (a consumer without a cursor has
    -- acked nothing of the group).
    -- v_safe: the first position some consumer has not fully acked (the commit a consumer's ack
    -- stopped in is done only if its last event is acked).
    SELECT min(CASE WHEN st.acked_event_id >= coalesce(
                       (SELECT max(e.event_id) FROM idem.outbox_commits m JOIN idem.outbox_events e
                            ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                         WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position = st.acked_position), 0)
                    THEN st.acked_position + 1 ELSE st.acked_position END) INTO v_safe
      FROM unnest(coalesce(v_consumers, '{}')) AS s(consumer),
           LATERAL idem._outbox_state(g.tenant_id, s.consumer, g.topic) st;
    -- Superseded delivery states (never the newest: a state newer than this snapshot's newest
    -- is not seen, so what is deleted is older still).
    DELETE FROM idem.outbox_cursor_states x
     WHERE x.tenant_id = g.tenant_id AND x.topic = g.topic AND x.consumer = ANY (coalesce(v_consumers, '{}'))
       AND x.version < (SELECT max(y.version) FROM idem.outbox_cursor_states y
                         WHERE y.tenant_id = x.tenant_id AND y.consumer = x.consumer AND y.topic = x.topic);
    v_safe := coalesce(v_safe, 9223372036854775807);
    -- A transaction with an open dead letter stays: replaying it needs the event (ack, nack and
    -- consume_once look it up) and its consume_once rows.
    SELECT array_agg(m.txn_id) INTO v_txns FROM (
      SELECT m.txn_id FROM idem.outbox_commits m
       WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position < v_safe AND m.committed_at < v_cutoff
         AND NOT EXISTS (SELECT 1 FROM idem.outbox_dead_letters d
                          WHERE d.tenant_id = m.tenant_id AND d.topic = m.topic AND d.position = m.position
                            AND d.resolved_at IS NULL)
       ORDER BY m.position LIMIT batch - v_n) m;
    CONTINUE WHEN v_txns IS NULL;
    WITH gone AS (
      DELETE FROM idem.outbox_events e
       WHERE e.tenant_id = g.tenant_id AND e.topic = g.topic AND e.txn_id = ANY (v_txns) RETURNING e.event_id)
    SELECT array_agg(event_id) INTO v_ids FROM gone;
    DELETE FROM idem.outbox_consumed k
     WHERE k.tenant_id = g.tenant_id AND k.consumer = ANY (coalesce(v_consumers, '{}')) AND k.event_id = ANY (v_ids);
    DELETE FROM idem.outbox_commits m WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.txn_id = ANY (v_txns);
    -- An empty commit (its events were rolled back with a savepoint) counts as one row.
    v_n := v_n + coalesce(cardinality(v_ids), 1);
  END LOOP;
  RETURN v_n;
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
-- A barrier: the reader's own (cheaper, perhaps leaky) conditions run only on the rows it may see.
ALTER VIEW idem.stuck_leases SET (security_barrier = true);
ALTER VIEW idem.outbox_lag SET (security_barrier = true);

-- ---------------------------------------------------------------------------------------------
-- Arguments the SQL-surface fuzzer found unchecked: multidimensional arrays (PostgreSQL refuses
-- `= ANY` over them with 0A000), and a tenant or order id too large for an index row (54000).

-- (Two overloads rather than one on anyarray: a pseudo-type argument cannot be called with a
-- literal, and the fuzzer calls every function so.)
CREATE FUNCTION idem._require_flat_array(p_value text[], p_name text) RETURNS void
  LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF array_ndims(p_value) > 1 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('%s must be a one-dimensional array, not %s-dimensional', p_name, array_ndims(p_value)));
  END IF;
END $$;

CREATE FUNCTION idem._require_flat_array(p_value bigint[], p_name text) RETURNS void
  LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT idem._require_flat_array(p_value::text[], p_name) $$;

CREATE FUNCTION idem._require_short_text(p_value text, p_name text) RETURNS void
  LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  -- The bound of a tenant and of every scope part (core/keys/key_validation.hpp): what an index
  -- row holds with room to spare.
  IF octet_length(p_value) > 256 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('%s is %s bytes; at most 256', p_name, octet_length(p_value)));
  END IF;
END $$;

CREATE OR REPLACE FUNCTION idem.create_consumer(consumer text, topics text[], max_attempts integer DEFAULT NULL) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_missing text;
BEGIN
  PERFORM idem._require_flat_array(topics, 'topics');
  IF consumer IS NULL OR consumer !~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('consumer %s is not a consumer name: 1-200 of A-Z a-z 0-9 . _ : -, starting with a letter or digit', coalesce(quote_literal(consumer), 'NULL')));
  END IF;
  IF topics IS NULL OR cardinality(topics) = 0 OR array_position(topics, NULL) IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'topics must be a non-empty array without NULLs');
  END IF;
  IF max_attempts IS NOT NULL AND max_attempts NOT BETWEEN 1 AND 1000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('max_attempts must be 1..1000, got %s', coalesce(max_attempts::text, 'NULL')));
  END IF;
  SELECT t INTO v_missing FROM unnest(topics) AS t
   WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_topics o WHERE o.topic = t) LIMIT 1;
  IF v_missing IS NOT NULL THEN
    PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN', format('no outbox topic %L', v_missing),
      'Create it first: SELECT idem.create_topic(''' || v_missing || ''');');
  END IF;
  -- A new consumer gets 5 attempts unless told; an existing one keeps its own unless told.
  INSERT INTO idem.outbox_consumers AS c (consumer, max_attempts)
    VALUES (create_consumer.consumer, coalesce(create_consumer.max_attempts, 5))
    ON CONFLICT ON CONSTRAINT outbox_consumers_pkey
    DO UPDATE SET max_attempts = coalesce(create_consumer.max_attempts, c.max_attempts);
  INSERT INTO idem.outbox_subscriptions (consumer, topic)
    SELECT DISTINCT create_consumer.consumer, t FROM unnest(topics) AS t
    ON CONFLICT DO NOTHING;
END $$;

CREATE OR REPLACE FUNCTION idem.claim(consumer text, topics text[] DEFAULT NULL, batch integer DEFAULT 100,
                           visibility interval DEFAULT '30 seconds')
  RETURNS TABLE (event_id bigint, tenant_id text, topic text, key text, payload jsonb,
                 emitted_at timestamptz, committed_at timestamptz, attempt integer,
                 redelivered boolean, token uuid)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_consumer idem.outbox_consumers;
  v_topics text[];
  v_unknown text;
  v_now timestamptz := clock_timestamp();
  v_until timestamptz;
  v_token uuid := gen_random_uuid();
  v_left integer;
  cand record;
  cur idem.outbox_cursor_states;
  d record;
  v_ids bigint[];
  v_positions bigint[];
  v_last integer;
  v_taken_over boolean;
  v_seen text[] := '{}';
BEGIN
  PERFORM idem._require_flat_array(topics, 'topics');
  v_consumer := idem._outbox_consumer(consumer);
  IF batch IS NULL OR batch NOT BETWEEN 1 AND 10000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..10000, got %s', coalesce(batch::text, 'NULL')));
  END IF;
  IF visibility IS NULL OR visibility <= interval '0' OR visibility > interval '12 hours' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('visibility must be a positive elapsed time of at most 12 hours, got %s', coalesce(visibility::text, 'NULL')));
  END IF;
  v_until := v_now + idem._elapsed(visibility);
  IF topics IS NULL THEN
    SELECT array_agg(s.topic ORDER BY s.topic) INTO v_topics FROM idem.outbox_subscriptions s WHERE s.consumer = claim.consumer;
  ELSE
    SELECT t INTO v_unknown FROM unnest(topics) AS t
     WHERE t IS NULL OR NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = claim.consumer AND s.topic = t)
     LIMIT 1;
    IF FOUND THEN
      PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN',
        format('consumer %L does not subscribe to topic %s', claim.consumer, coalesce(quote_literal(v_unknown), 'NULL')),
        'Subscribe with idem.create_consumer(consumer, topics), or pass NULL for all of its topics.');
    END IF;
    v_topics := topics;
  END IF;
  v_left := batch;

  -- New groups get their cursor here, by one claim of the consumer at a time (a try-lock: a
  -- claim never waits for another; the next one picks up what this one skipped).
  IF idem._try_lock_key(hashtextextended('idem.outbox_discover:' || claim.consumer, 0)) THEN
    INSERT INTO idem.outbox_cursors (tenant_id, consumer, topic)
      SELECT g.tenant_id, claim.consumer, g.topic FROM idem.outbox_groups g
       WHERE g.topic = ANY (v_topics)
         AND NOT EXISTS (SELECT 1 FROM idem.outbox_cursors c
                          WHERE c.tenant_id = g.tenant_id AND c.consumer = claim.consumer AND c.topic = g.topic)
      ON CONFLICT DO NOTHING;
  END IF;

  -- Replays of dead letters.
  FOR d IN SELECT * FROM idem.outbox_dead_letters x
            WHERE x.consumer = claim.consumer AND x.topic = ANY (v_topics)
              AND x.replay_requested_at IS NOT NULL AND x.resolved_at IS NULL
              AND (x.claim_until IS NULL OR x.claim_until <= v_now)
            ORDER BY x.replay_requested_at, x.event_id LIMIT v_left
              FOR UPDATE SKIP LOCKED LOOP
    IF d.claim_token IS NOT NULL THEN
      -- Its replay's claim ran out without an ack: the replay failed, like a nack of it, and the
      -- letter is dead again until an operator asks once more.
      UPDATE idem.outbox_dead_letters x
         SET attempts = x.attempts + 1, replay_requested_at = NULL, claim_token = NULL, claim_until = NULL,
             last_error = format('replay claim expired at %s without an ack',
                                 to_char(d.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
       WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
      CONTINUE;
    END IF;
    UPDATE idem.outbox_dead_letters x SET claim_token = v_token, claim_until = v_until
     WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
    event_id := d.event_id; tenant_id := d.tenant_id; topic := d.topic; key := d.key; payload := d.payload;
    emitted_at := d.emitted_at; committed_at := d.committed_at; attempt := d.attempts + 1;
    redelivered := true; token := v_token;
    RETURN NEXT;
    v_left := v_left - 1;
  END LOOP;

  -- Groups with events past their cursor and no live claim, taken one at a time: pick one by its
  -- newest state, lock it without waiting, and decide again on the state read under the lock.
  LOOP
    EXIT WHEN v_left <= 0;
    SELECT c.tenant_id, c.topic INTO cand FROM idem.outbox_cursors c
      LEFT JOIN LATERAL (SELECT * FROM idem.outbox_cursor_states x
                          WHERE x.tenant_id = c.tenant_id AND x.consumer = c.consumer AND x.topic = c.topic
                          ORDER BY x.version DESC LIMIT 1) s ON true
     WHERE c.consumer = claim.consumer AND c.topic = ANY (v_topics)
       AND NOT (c.tenant_id || chr(31) || c.topic = ANY (v_seen))  -- tenants and topics hold no control characters
       AND (s.claim_until IS NULL OR s.claim_until <= v_now)
       AND (s.not_before IS NULL OR s.not_before <= v_now)
       -- Commits past the cursor drive (an index range from the cursor: nothing acked is read).
       -- OFFSET 0 keeps each EXISTS a correlated probe (the planner would otherwise turn it into
       -- a semi-join that reads every commit of the group), ORDER BY makes it walk the position
       -- index from the cursor rather than the txn_id index with a filter.
       AND EXISTS (SELECT 1 FROM idem.outbox_commits m
                    WHERE m.tenant_id = c.tenant_id AND m.topic = c.topic AND m.position >= coalesce(s.acked_position, 0)
                      AND EXISTS (SELECT 1 FROM idem.outbox_events e
                                   WHERE e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                                     AND (m.position, e.event_id) > (coalesce(s.acked_position, 0), coalesce(s.acked_event_id, 0))
                                  OFFSET 0)
                    ORDER BY m.position OFFSET 0)
     ORDER BY s.last_claimed_at NULLS FIRST, c.tenant_id, c.topic
     LIMIT 1;
    EXIT WHEN NOT FOUND;
    v_seen := v_seen || (cand.tenant_id || chr(31) || cand.topic);
    cur := idem._outbox_lock(cand.tenant_id, claim.consumer, cand.topic, 'skip');
    CONTINUE WHEN cur.tenant_id IS NULL;                      -- another claim holds it
    CONTINUE WHEN cur.claim_until > v_now OR cur.not_before > v_now;  -- claimed or nacked meanwhile
    v_taken_over := cur.claim_events IS NOT NULL;
    IF v_taken_over THEN
      -- Taking over a claim whose visibility ran out: it counts as a failure of its oldest event.
      cur := idem._outbox_fail_head(v_consumer, cur, format('claim expired at %s without an ack', to_char(cur.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')), v_now);
    END IF;
    SELECT array_agg(n.event_id ORDER BY n.position, n.event_id), array_agg(n.position ORDER BY n.position, n.event_id)
      INTO v_ids, v_positions
      FROM (SELECT e.event_id, m.position FROM idem.outbox_commits m
             CROSS JOIN LATERAL (SELECT x.event_id FROM idem.outbox_events x
                                  WHERE x.tenant_id = m.tenant_id AND x.topic = m.topic AND x.txn_id = m.txn_id
                                    AND (m.position, x.event_id) > (cur.acked_position, cur.acked_event_id)
                                  ORDER BY x.event_id OFFSET 0) e
             WHERE m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position >= cur.acked_position
             ORDER BY m.position, e.event_id LIMIT v_left) n;
    IF v_ids IS NULL THEN
      -- Nothing left to hand out (the last event went to the dead letters just now, or another
      -- claim acked it between the pick and the lock): keep a takeover's changes.
      IF v_taken_over THEN
        PERFORM idem._outbox_write(cur);
      END IF;
      CONTINUE;
    END IF;
    v_last := cardinality(v_ids);
    RETURN QUERY
      SELECT e.event_id, e.tenant_id, e.topic, e.key, e.payload, e.emitted_at, m.committed_at,
             CASE WHEN e.event_id = cur.head_event_id THEN cur.head_attempts + 1 ELSE 1 END,
             (m.position, e.event_id) <= (cur.delivered_position, cur.delivered_event_id), v_token
        FROM unnest(v_ids, v_positions) WITH ORDINALITY AS u(id, pos, n)
        JOIN idem.outbox_commits m ON m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position = u.pos
        JOIN idem.outbox_events e ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id AND e.event_id = u.id
       ORDER BY u.n;
    IF (v_positions[v_last], v_ids[v_last]) > (cur.delivered_position, cur.delivered_event_id) THEN
      cur.delivered_position := v_positions[v_last];
      cur.delivered_event_id := v_ids[v_last];
    END IF;
    cur.claim_token := v_token; cur.claim_until := v_until;
    cur.claim_events := v_ids; cur.claim_positions := v_positions; cur.claim_acked := '{}';
    cur.last_token := v_token; cur.not_before := NULL; cur.last_claimed_at := v_now;
    PERFORM idem._outbox_write(cur);
    v_left := v_left - v_last;
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION idem.ack(consumer text, event_ids bigint[], token uuid) RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  g record;
  v_n integer := 0;
  v_missing bigint;
  v_replays bigint[];
  v_ids bigint[];
  v_positions bigint[];
BEGIN
  PERFORM idem._require_flat_array(event_ids, 'event_ids');
  PERFORM idem._outbox_consumer(consumer);
  IF token IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'token must be the claim token idem.claim returned');
  END IF;
  IF event_ids IS NULL OR cardinality(event_ids) = 0 OR array_position(event_ids, NULL) IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'event_ids must be a non-empty array without NULLs');
  END IF;
  SELECT x INTO v_missing FROM unnest(event_ids) AS x
   WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_events e WHERE e.event_id = x) LIMIT 1;
  IF FOUND THEN
    PERFORM idem._outbox_event(consumer, v_missing);  -- raises ERR_OUTBOX_EVENT_UNKNOWN
  END IF;
  FOR g IN SELECT e.tenant_id, e.topic, array_agg(e.event_id ORDER BY e.event_id) AS ids,
                  array_agg(m.position ORDER BY e.event_id) AS positions
             FROM idem.outbox_events e
             LEFT JOIN idem.outbox_commits m ON m.tenant_id = e.tenant_id AND m.topic = e.topic AND m.txn_id = e.txn_id
            WHERE e.event_id = ANY (event_ids)
            GROUP BY e.tenant_id, e.topic ORDER BY e.tenant_id, e.topic LOOP
    IF NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = ack.consumer AND s.topic = g.topic) THEN
      PERFORM idem._outbox_event(consumer, g.ids[1]);  -- raises ERR_OUTBOX_NOT_CLAIMED
    END IF;
    -- One claim may hold replays of dead letters and the group's own events: each part is acked
    -- where it is kept.
    SELECT coalesce(array_agg(d.event_id), '{}') INTO v_replays FROM idem.outbox_dead_letters d
     WHERE d.tenant_id = g.tenant_id AND d.consumer = ack.consumer AND d.event_id = ANY (g.ids)
       AND ((d.claim_token IS NOT NULL AND d.resolved_at IS NULL) OR (d.resolution = 'replayed' AND d.claim_token = token));
    IF cardinality(v_replays) > 0 THEN
      v_n := v_n + idem._outbox_ack_replays(consumer, g.tenant_id, v_replays, token);
    END IF;
    IF cardinality(v_replays) < cardinality(g.ids) THEN
      SELECT array_agg(u.id ORDER BY u.n), array_agg(u.pos ORDER BY u.n) INTO v_ids, v_positions
        FROM unnest(g.ids, g.positions) WITH ORDINALITY AS u(id, pos, n) WHERE NOT (u.id = ANY (v_replays));
      v_n := v_n + idem._outbox_ack_group(consumer, g.tenant_id, g.topic, v_ids, v_positions, token);
    END IF;
  END LOOP;
  RETURN v_n;
END $$;

CREATE OR REPLACE FUNCTION idem.complete(handle text, attempt bigint, status integer, headers jsonb, body bytea,
                              order_id text DEFAULT NULL, handler_response jsonb DEFAULT NULL,
                              local_status text DEFAULT NULL, handler_called boolean DEFAULT true)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  PERFORM idem._require_short_text(order_id, 'order_id');
  IF status IS NULL OR status NOT BETWEEN 100 AND 599 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('status must be an HTTP status code 100..599, got %s', coalesce(status::text, 'NULL')));
  END IF;
  IF headers IS NOT NULL AND jsonb_typeof(headers) <> 'object' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('headers must be a JSON object of header names to values, got a JSON %s', jsonb_typeof(headers)));
  END IF;
  IF handler_called IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'handler_called must be true or false',
      'Say whether the handler (the payment processor) was called for this result.');
  END IF;
  PERFORM idem._require_durable_store();
  r := idem._holder_row(handle, attempt, 'complete');
  v_now := clock_timestamp();
  UPDATE idem.keys k SET status = 'resolved', response_status = complete.status,
         response_headers = coalesce(headers, '{}'::jsonb), response_body = coalesce(body, ''::bytea),
         order_id = complete.order_id, handler_response = complete.handler_response,
         local_status = complete.local_status,
         lease_expires_at = NULL, resolved_at = v_now, expires_at = v_now + k.ttl
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  PERFORM idem._audit_holder(r, 'completed', handler_called, order_id, handler_response, local_status, NULL, v_now);
END $$;

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
-- The machines hold for every tenant: only an unbound operator edits them.
CREATE POLICY operator_edits_machines ON idem.machine_states FOR ALL TO idem_operator
  USING (idem._session_unbound()) WITH CHECK (idem._session_unbound());
CREATE POLICY operator_edits_machines ON idem.machine_transitions FOR ALL TO idem_operator
  USING (idem._session_unbound()) WITH CHECK (idem._session_unbound());

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
GRANT EXECUTE ON FUNCTION idem._session_unbound() TO idem_operator;
