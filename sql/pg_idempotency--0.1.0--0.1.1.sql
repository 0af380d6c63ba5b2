-- pg_idempotency 0.1.0 -> 0.1.1: protocol corrections. A refused caller holds nothing, an expired
-- record never resumes, a checkpointed record is never purged, a key's generation survives purge,
-- leases and TTLs are elapsed time, lookups never depend on the planner's size estimate, key
-- columns compare bytewise, and the install refuses an untrusted schema or a non-UTF-8 database.
-- The rules are in docs/design-decisions.md; CREATE EXTENSION runs 0.1.0's script, then this one.
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.1.1'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- Raising by name: the SQLSTATE of every error comes from core/error.cpp's table.

CREATE FUNCTION idem._raise(name text, message text, hint text DEFAULT NULL) RETURNS void
  AS 'MODULE_PATHNAME', 'idem_raise'
  LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idem._raise(text, text, text) IS
  'Raises our error `name` (e.g. ERR_LEASE_LOST) with its SQLSTATE from the one error table; message without the name.';

-- ---------------------------------------------------------------------------------------------
-- Install trust: the schema must be the installer's and hold nothing but this extension, or its
-- owner could drop every record or plant an overload that our functions would call.

DO $$
DECLARE
  v_ext      oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idempotency');
  v_owner    oid := (SELECT e.extowner FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idempotency');
  v_schema   oid := 'idem'::regnamespace;
  v_stranger text;
BEGIN
  IF pg_catalog.getdatabaseencoding() <> 'UTF8' THEN
    PERFORM idem._raise('ERR_DATABASE_ENCODING_UNSUPPORTED',
      pg_catalog.format('database %I has encoding %s; pg_idempotency needs UTF8', pg_catalog.current_database(),
                        pg_catalog.getdatabaseencoding()),
      'Fingerprints are computed over UTF-8 bytes (as clients compute them). Create the database WITH ENCODING ''UTF8'' TEMPLATE template0.');
  END IF;
  IF (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.oid = v_schema) <> v_owner THEN
    PERFORM idem._raise('ERR_SCHEMA_UNTRUSTED',
      pg_catalog.format('schema idem is owned by %s, not by %s who installs the extension',
                        (SELECT n.nspowner::regrole FROM pg_catalog.pg_namespace n WHERE n.oid = v_schema), v_owner::regrole),
      'Drop or rename that schema (its owner could drop or replace our objects), then CREATE EXTENSION pg_idempotency.');
  END IF;
  SELECT o.what INTO v_stranger FROM (
      SELECT pg_catalog.format('function %s', p.oid::regprocedure) AS what, 'pg_catalog.pg_proc'::regclass AS cls, p.oid
        FROM pg_catalog.pg_proc p WHERE p.pronamespace = v_schema
      UNION ALL
      SELECT pg_catalog.format('relation %s', c.oid::regclass), 'pg_catalog.pg_class'::regclass, c.oid
        FROM pg_catalog.pg_class c WHERE c.relnamespace = v_schema AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      UNION ALL
      SELECT pg_catalog.format('type %s', t.oid::regtype), 'pg_catalog.pg_type'::regclass, t.oid
        FROM pg_catalog.pg_type t
       WHERE t.typnamespace = v_schema AND (t.typtype IN ('b', 'd', 'e', 'r', 'm')
             OR (t.typtype = 'c' AND (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid) = 'c'))
      UNION ALL
      SELECT pg_catalog.format('operator %s', o.oid::regoperator), 'pg_catalog.pg_operator'::regclass, o.oid
        FROM pg_catalog.pg_operator o WHERE o.oprnamespace = v_schema
      UNION ALL
      SELECT pg_catalog.format('collation %s', co.oid::regcollation), 'pg_catalog.pg_collation'::regclass, co.oid
        FROM pg_catalog.pg_collation co WHERE co.collnamespace = v_schema
    ) o
   -- A member of the extension, or an internal part of one (an array type, a row type).
   WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                      WHERE d.classid = o.cls AND d.objid = o.oid
                        AND ((d.deptype = 'e' AND d.refobjid = v_ext) OR d.deptype = 'i'))
   LIMIT 1;
  IF v_stranger IS NOT NULL THEN
    PERFORM idem._raise('ERR_SCHEMA_UNTRUSTED',
      pg_catalog.format('schema idem holds %s, which is not part of pg_idempotency', v_stranger),
      'Install into an empty schema idem (or none: CREATE EXTENSION creates it); move foreign objects elsewhere.');
  END IF;
END $$;

-- ---------------------------------------------------------------------------------------------
-- C helpers of the protocol (extension/protocol_functions.cpp).

CREATE FUNCTION idem._decide(status text, history boolean, lease_live boolean, own_transaction boolean,
                             has_checkpoint boolean, same_payload boolean) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_decide'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._decide(text, boolean, boolean, boolean, boolean, boolean) IS
  'The acquisition table of core/protocol/decision.cpp: insert, new_generation, fresh_attempt, resume, replay, mismatch or busy.';

-- A key's lock lives in an advisory-lock tag space of its own, which SQL's pg_advisory_* functions
-- cannot reach: a role that can connect cannot pin a key, or make its holder believe it lost it.
CREATE FUNCTION idem._try_lock_key(lock_key bigint) RETURNS boolean
  AS 'MODULE_PATHNAME', 'idem_try_lock_key'
  LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idem._try_lock_key(bigint) IS
  'Takes the key''s transaction-level lock if it is free, never waiting (advisory tag space 3, out of reach of pg_advisory_*).';

CREATE FUNCTION idem._wait_lock_key(lock_key bigint) RETURNS void
  AS 'MODULE_PATHNAME', 'idem_wait_lock_key'
  LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idem._wait_lock_key(bigint) IS
  'Takes the key''s transaction-level lock, waiting (lock_timeout and deadlock detection apply).';

CREATE FUNCTION idem._unlock_key(lock_key bigint) RETURNS boolean
  AS 'MODULE_PATHNAME', 'idem_unlock_key'
  LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idem._unlock_key(bigint) IS
  'Gives back one hold of the key''s lock taken by the current resource owner: a refused acquire holds nothing.';

CREATE FUNCTION idem._key_locked_by_me(lock_key bigint) RETURNS boolean
  AS 'MODULE_PATHNAME', 'idem_key_locked_by_me'
  LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idem._key_locked_by_me(bigint) IS
  'Whether this transaction holds the key''s lock (locks are re-entrant: a second take would succeed).';

CREATE FUNCTION idem._lease(lease interval) RETURNS interval
  AS 'MODULE_PATHNAME', 'idem_lease'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._lease(interval) IS
  'The lease as elapsed time (NULL: idem.lease_timeout); ERR_ARGUMENT_INVALID unless positive and at most idem.max_lease.';

CREATE FUNCTION idem._ttl(ttl interval) RETURNS interval
  AS 'MODULE_PATHNAME', 'idem_ttl'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._ttl(interval) IS
  'The TTL as elapsed time (NULL: idem.default_ttl); ERR_ARGUMENT_INVALID unless positive and at most idem.max_ttl.';

CREATE FUNCTION idem._retired_generation_now(tenant text, scope_digest bytea) RETURNS integer
  AS 'MODULE_PATHNAME', 'idem_retired_generation_now'
  LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idem._retired_generation_now(text, bytea) IS
  'The generation idem.retired_keys holds for the key in the latest committed state (not the caller''s snapshot); 0 when none.';

CREATE FUNCTION idem._wait_timeout() RETURNS interval
  AS 'MODULE_PATHNAME', 'idem_wait_timeout'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._wait_timeout() IS 'idem.wait_timeout: the longest acquire(on_busy => ''wait'') polls.';

CREATE FUNCTION idem._history_retention() RETURNS interval
  AS 'MODULE_PATHNAME', 'idem_history_retention'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._history_retention() IS 'idem.history_retention: how long a purged key''s generation is remembered.';

-- ---------------------------------------------------------------------------------------------
-- The store. expires_at is now "when the record becomes history" for every state that may:
-- resolved and released-before-checkpoint records TTL after they resolved, an abandoned lease
-- without a checkpoint TTL after its lease ended. A record with a checkpoint that is not resolved
-- never becomes history (expires_at NULL): it resumes, or an operator resolves it.

-- Bytewise comparison: an operating-system collation update cannot reorder the primary key.
ALTER TABLE idem.keys ALTER COLUMN tenant_id TYPE text COLLATE "C";

ALTER TABLE idem.keys DROP CONSTRAINT keys_check1;
UPDATE idem.keys k SET expires_at = CASE
    WHEN k.status = 'resolved' THEN k.expires_at
    WHEN k.recovery_point IS NOT NULL THEN NULL
    WHEN k.status = 'in_progress' THEN k.lease_expires_at + k.ttl
    ELSE k.expires_at END;
ALTER TABLE idem.keys ADD CONSTRAINT keys_history_check
  CHECK ((expires_at IS NULL) = (status <> 'resolved' AND recovery_point IS NOT NULL));
COMMENT ON COLUMN idem.keys.expires_at IS
  'When the record becomes history (the key starts a new generation); NULL for unresolved work with a checkpoint, which never does.';

-- A key's generation outlives its record: purge leaves (tenant, digest, generation) here, and a
-- reused key continues from it, so ids and processor keys derived from a generation never repeat.
CREATE TABLE idem.retired_keys (
  tenant_id    text COLLATE "C" NOT NULL CHECK (tenant_id <> ''),
  scope_digest bytea       NOT NULL CHECK (octet_length(scope_digest) = 32),
  generation   integer     NOT NULL CHECK (generation > 0),
  retired_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, scope_digest)
);
COMMENT ON TABLE idem.retired_keys IS
  'The last generation of each purged key, kept for idem.history_retention; written only by idem.purge_expired.';
CREATE INDEX retired_keys_retired_at_idx ON idem.retired_keys (retired_at);
SELECT pg_catalog.pg_extension_config_dump('idem.retired_keys', '');

-- Every explicit resolution of stuck work, by whom and why.
CREATE TABLE idem.operator_actions (
  action_id      bigint GENERATED ALWAYS AS IDENTITY,
  tenant_id      text COLLATE "C" NOT NULL,
  scope_digest   bytea       NOT NULL,
  action         text        NOT NULL CHECK (action IN ('resolve_stuck')),
  attempt        bigint      NOT NULL,
  generation     integer     NOT NULL,
  recovery_point text,
  recovery_data  jsonb,
  response_status smallint   NOT NULL,
  reason         text        NOT NULL CHECK (reason <> ''),
  performed_by   name        NOT NULL,
  performed_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, action_id)
);
COMMENT ON TABLE idem.operator_actions IS
  'Append-only log of operator resolutions (idem.resolve_stuck): what the record held and why it was resolved.';
SELECT pg_catalog.pg_extension_config_dump('idem.operator_actions', '');

ALTER TYPE idem.acquire_result ADD ATTRIBUTE lease_expires_at timestamptz;  -- acquired/resumed: when the lease ends

-- on_busy => 'wait' behind a transaction that is writing the key: wait until the key's lock is
-- free, but no longer than the deadline (an orphaned prepared transaction holds it for good).
-- True when it became free; the caller then reads and decides again. The wait runs in a
-- subtransaction because a lock wait that times out is cleaned up only by a rollback; it writes
-- nothing, so it costs no subtransaction id, and only the wait path pays for it. The lock is
-- given back inside the subtransaction, by the resource owner that took it.
CREATE FUNCTION idem._wait_for_key_lock(p_lock bigint, p_deadline timestamptz) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_ms    bigint := ceil(extract(epoch FROM p_deadline - clock_timestamp()) * 1000);
  v_saved text := current_setting('lock_timeout');
BEGIN
  IF v_ms IS NULL OR v_ms <= 0 THEN RETURN false; END IF;  -- no deadline: not a waiter
  BEGIN
    PERFORM set_config('lock_timeout', v_ms || 'ms', true);
    PERFORM idem._wait_lock_key(p_lock);
    PERFORM idem._unlock_key(p_lock);
    PERFORM set_config('lock_timeout', v_saved, true);
    RETURN true;
  EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
    -- Timed out, or chosen to break a deadlock with a waiter that holds a key this transaction
    -- wants: either way a busy key. The rollback gave back lock_timeout and left no wait behind.
    RETURN false;
  END;
END $$;
REVOKE ALL ON FUNCTION idem._wait_for_key_lock(bigint, timestamptz) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- acquire. Read the record, ask the table (idem._decide), and take the key's lock only for a
-- decision that writes; decide again under it. A caller that is not given the key leaves holding
-- nothing: a lock taken for a write that the second read ruled out is given back.

CREATE OR REPLACE FUNCTION idem._acquire(p_tenant text, p_digest bytea, p_key text, p_hash bytea,
                                         p_caller text, p_resource text, p_lease interval, p_ttl interval,
                                         p_on_busy text)
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
BEGIN
  IF p_on_busy IS NULL OR p_on_busy NOT IN ('reject', 'wait') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('on_busy must be ''reject'' or ''wait'', not %s', coalesce(quote_literal(p_on_busy), 'NULL')));
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
           k.expires_at, k.xmin AS row_xmin
      INTO r FROM idem.keys k
     WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest;
    v_found := FOUND;
    v_now := clock_timestamp();
    v_own := v_found AND r.status = 'in_progress' AND idem._written_by_current_transaction(r.row_xmin);
    IF v_found THEN
      v_decision := idem._decide(r.status, r.expires_at <= v_now, r.lease_expires_at > v_now, v_own,
                                 r.recovery_point IS NOT NULL, r.payload_hash = p_hash);
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
                                  lease_expires_at, created_at, expires_at)
      VALUES (p_tenant, p_digest, 'in_progress', nextval('idem.fencing_token_seq'), 1 + v_retired,
              p_hash, idem.fingerprint_scheme(), p_caller, p_resource, p_key, v_lease, v_ttl,
              v_now + v_lease, v_now, v_now + v_lease + v_ttl)
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
             expires_at = CASE WHEN k.recovery_point IS NULL THEN v_now + v_lease + v_ttl END
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
          resolved_at = NULL, expires_at = v_now + v_lease + v_ttl
       WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'acquired';
    END IF;
    RETURN res;
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload jsonb, caller text DEFAULT '',
                                        resource text DEFAULT '', lease interval DEFAULT NULL,
                                        ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
BEGIN
  IF payload IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'payload must not be NULL',
      'Pass the request body; use ''{}'' or ''null'' for a request without one.');
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       idem.payload_hash(payload), caller, resource, lease, ttl, on_busy);
END $$;

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload text, caller text DEFAULT '',
                                        resource text DEFAULT '', lease interval DEFAULT NULL,
                                        ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
BEGIN
  IF payload IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'payload must not be NULL',
      'Pass the request body; use ''{}'' or ''null'' for a request without one.');
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       idem.payload_hash(payload), caller, resource, lease, ttl, on_busy);
END $$;

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload_hash bytea, caller text DEFAULT '',
                                        resource text DEFAULT '', lease interval DEFAULT NULL,
                                        ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
BEGIN
  IF payload_hash IS NULL OR octet_length(payload_hash) <> 32 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('payload_hash must be the 32-byte SHA-256 fingerprint, got %s bytes', coalesce(octet_length(payload_hash)::text, 'NULL')),
      'Compute it with idem.payload_hash() or the client library (same scheme, same bytes).');
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       payload_hash, caller, resource, lease, ttl, on_busy);
END $$;

-- ---------------------------------------------------------------------------------------------
-- What a holder may do. The holder never waits for a contender's transaction: while its lease is
-- live nobody may take the key over, so whoever holds the key's lock is a contender reading one
-- row before it refuses; once the lease has run out, a busy lock means a takeover: ERR_LEASE_LOST.

DROP FUNCTION idem._holder_row(text, bigint, text);
CREATE FUNCTION idem._holder_row(p_handle text, p_attempt bigint, p_action text)
  RETURNS idem.keys
  -- Called only by checkpoint/complete/release/resolve_stuck, which run as the owner with a safe search_path.
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_digest bytea := idem._handle_digest(p_handle);
  v_tenant text := idem._handle_tenant(p_handle);
  v_lock   bigint := idem._lock_key(v_digest);
  v_deadline timestamptz;
  r idem.keys;
BEGIN
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
  RETURN r;
END $$;
REVOKE ALL ON FUNCTION idem._holder_row(text, bigint, text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION idem.checkpoint(handle text, attempt bigint, recovery_point text, data jsonb DEFAULT NULL)
  RETURNS timestamptz
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.keys;
  v_expires timestamptz;
BEGIN
  IF recovery_point IS NULL OR recovery_point = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'recovery_point must be a non-empty name such as ''charge_created''');
  END IF;
  -- A lost checkpoint would resume from an older recovery point and repeat a side effect.
  PERFORM idem._require_durable_store();
  r := idem._holder_row(handle, attempt, 'checkpoint');
  v_expires := clock_timestamp() + r.lease_interval;
  -- From now on the record is never history: it resumes here until completed or resolved.
  UPDATE idem.keys k SET recovery_point = checkpoint.recovery_point, recovery_data = data,
         lease_expires_at = v_expires, expires_at = NULL
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  RETURN v_expires;
END $$;

CREATE OR REPLACE FUNCTION idem.complete(handle text, attempt bigint, status integer, headers jsonb, body bytea,
                                         order_id text DEFAULT NULL, handler_response jsonb DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  IF status IS NULL OR status NOT BETWEEN 100 AND 599 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('status must be an HTTP status code 100..599, got %s', coalesce(status::text, 'NULL')));
  END IF;
  IF headers IS NOT NULL AND jsonb_typeof(headers) <> 'object' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('headers must be a JSON object of header names to values, got a JSON %s', jsonb_typeof(headers)));
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

CREATE OR REPLACE FUNCTION idem.release(handle text, attempt bigint, error text DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  r := idem._holder_row(handle, attempt, 'release');
  v_now := clock_timestamp();
  -- Released before a checkpoint: history after the TTL, a fresh attempt until then. Released
  -- after one: it resumes at that checkpoint, and is never purged.
  UPDATE idem.keys k SET status = 'released', last_error = error, lease_expires_at = NULL,
         expires_at = CASE WHEN k.recovery_point IS NULL THEN v_now + k.ttl END
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
END $$;

-- ---------------------------------------------------------------------------------------------
-- Operators: unresolved work with a checkpoint stays until it is completed or resolved here.

CREATE FUNCTION idem.resolve_stuck(handle text, attempt bigint, reason text, status integer,
                                   body bytea DEFAULT ''::bytea, headers jsonb DEFAULT '{}'::jsonb)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
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
END $$;
COMMENT ON FUNCTION idem.resolve_stuck(text, bigint, text, integer, bytea, jsonb) IS
  'Operator: resolve unresolved work (an expired lease, or a release after a checkpoint) with the response retries will replay; logged in idem.operator_actions.';

-- ---------------------------------------------------------------------------------------------
-- Retention. Each victim is deleted under its key's lock, taken without waiting (a key in use,
-- also by the caller's own transaction, is passed over) and kept until commit, so acquirers see a
-- busy key (in_progress, or a bounded wait) and never insert behind an uncommitted delete; at most
-- 500 keys a call. Unresolved work with a checkpoint (expires_at NULL) is never touched; each key's
-- generation is kept in idem.retired_keys.

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
COMMENT ON FUNCTION idem.purge_expired(integer) IS
  'Delete up to least(batch, 500) records that became history (their generation is kept in idem.retired_keys) and forget generations older than idem.history_retention; returns the records removed. Call until 0, each call in its own transaction.';

-- ---------------------------------------------------------------------------------------------
-- Privileges: PUBLIC executes nothing of ours but the pure functions granted below; operators
-- resolve stuck work.

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'idem_operator') THEN
    CREATE ROLE idem_operator NOLOGIN;
  END IF;
END $$;

REVOKE ALL ON ALL TABLES IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA idem FROM PUBLIC;
GRANT USAGE ON SCHEMA idem TO idem_operator;
GRANT EXECUTE ON FUNCTION idem.resolve_stuck(text, bigint, text, integer, bytea, jsonb),
                          idem.purge_expired(integer) TO idem_operator;
GRANT SELECT ON ALL TABLES IN SCHEMA idem TO idem_auditor, idem_operator;
