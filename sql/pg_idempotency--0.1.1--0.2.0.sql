-- pg_idempotency 0.1.1 -> 0.2.0: state machines as data with a forward-only trigger, the
-- append-only audit trail of every mutation, deterministic order ids and processor keys, and the
-- runbook's forensic queries (docs/runbook.md).
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.2.0'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- State machines. States and transitions are rows; a transition may carry a guard (a function of
-- the row as jsonb returning boolean) and the name a refusal quotes. Every backend caches them
-- (extension/machine_cache.cpp) and drops the cache when a statement changes these tables.

CREATE TABLE idem.machine_states (
  machine     text COLLATE "C" NOT NULL CHECK (machine <> ''),
  state       text COLLATE "C" NOT NULL CHECK (state <> ''),
  description text NOT NULL,
  PRIMARY KEY (machine, state)
);
COMMENT ON TABLE idem.machine_states IS
  'The states of every state machine; a state without an outgoing transition is terminal. Add machines with plain INSERTs.';

CREATE TABLE idem.machine_transitions (
  machine    text COLLATE "C" NOT NULL,
  from_state text COLLATE "C" NOT NULL,
  to_state   text COLLATE "C" NOT NULL,
  guard      regprocedure,
  guard_name text,
  PRIMARY KEY (machine, from_state, to_state),
  FOREIGN KEY (machine, from_state) REFERENCES idem.machine_states (machine, state),
  FOREIGN KEY (machine, to_state) REFERENCES idem.machine_states (machine, state),
  CHECK (from_state <> to_state),
  CHECK ((guard IS NULL) = (guard_name IS NULL))
);
COMMENT ON TABLE idem.machine_transitions IS
  'The allowed transitions of every state machine; guard(row jsonb) -> boolean must hold for guarded ones, and a refusal quotes guard_name.';
SELECT pg_catalog.pg_extension_config_dump('idem.machine_states', '');
SELECT pg_catalog.pg_extension_config_dump('idem.machine_transitions', '');

-- A guard runs with the privileges of whoever changes a row, so only a function a superuser owns,
-- of the shape (row jsonb) RETURNS boolean, may be one (checked again when it is called).
CREATE FUNCTION idem._check_guard() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NEW.guard IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM pg_proc p JOIN pg_roles o ON o.oid = p.proowner
        WHERE p.oid = NEW.guard AND p.prokind = 'f' AND p.prorettype = 'boolean'::regtype AND NOT p.proretset
          AND p.pronargs = 1 AND p.proargtypes[0] = 'jsonb'::regtype AND o.rolsuper) THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('guard %s of %s %s -> %s must be a function (row jsonb) RETURNS boolean owned by a superuser',
             NEW.guard, NEW.machine, NEW.from_state, NEW.to_state),
      'Ask the database owner to create the guard function; it runs with the privileges of whoever changes a row.');
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER machine_transitions_guard BEFORE INSERT OR UPDATE OF guard ON idem.machine_transitions
  FOR EACH ROW EXECUTE FUNCTION idem._check_guard();

CREATE FUNCTION idem._machines_changed() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_machines_changed' LANGUAGE C;
COMMENT ON FUNCTION idem._machines_changed() IS
  'Statement trigger of the machine tables: every backend drops its cached state machines.';
CREATE TRIGGER machine_states_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idem.machine_states
  FOR EACH STATEMENT EXECUTE FUNCTION idem._machines_changed();
CREATE TRIGGER machine_transitions_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idem.machine_transitions
  FOR EACH STATEMENT EXECUTE FUNCTION idem._machines_changed();

-- The shipped machines. order: the reference design's §8.2 exactly (shipped is terminal; §8.3's
-- "refund needs confirmed or shipped" contradicts it and its own example, see docs/runbook.md).
INSERT INTO idem.machine_states (machine, state, description) VALUES
  ('order', 'created',   'just placed at the merchant'),
  ('order', 'confirmed', 'the merchant confirmed receipt'),
  ('order', 'shipped',   'fulfillment initiated (terminal)'),
  ('order', 'cancelled', 'not proceeding, no refund (terminal)'),
  ('order', 'refunded',  'money returned to the buyer (terminal)'),
  ('payment', 'authorized',         'funds held, not captured'),
  ('payment', 'captured',           'funds taken'),
  ('payment', 'voided',             'authorization released before capture (terminal)'),
  ('payment', 'failed',             'the processor refused (terminal)'),
  ('payment', 'partially_refunded', 'part of the capture returned'),
  ('payment', 'refunded',           'the whole capture returned (terminal)');

-- Guards of the shipped machines: a row may say so ({"stock_available": false},
-- {"captured": true}); a row that says nothing passes, one that says something other than a
-- boolean does not (it cannot show that the condition holds).
CREATE FUNCTION idem.guard_stock_available(row_data jsonb) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN NOT (row_data ? 'stock_available') OR row_data -> 'stock_available' = 'true'::jsonb;
COMMENT ON FUNCTION idem.guard_stock_available(jsonb) IS
  'Guard "stock available" of order created -> confirmed: false when the row says stock_available = false.';
CREATE FUNCTION idem.guard_before_capture(row_data jsonb) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN NOT (row_data ? 'captured') OR row_data -> 'captured' = 'false'::jsonb;
COMMENT ON FUNCTION idem.guard_before_capture(jsonb) IS
  'Guard "before payment capture" of order created -> cancelled: false when the row says captured = true.';

INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES
  ('order', 'created',   'confirmed', 'idem.guard_stock_available(jsonb)', 'stock available'),
  ('order', 'created',   'cancelled', 'idem.guard_before_capture(jsonb)',  'before payment capture'),
  ('order', 'created',   'refunded',  NULL, NULL),
  ('order', 'confirmed', 'shipped',   NULL, NULL),
  ('order', 'confirmed', 'refunded',  NULL, NULL),
  ('payment', 'authorized',         'captured',           NULL, NULL),
  ('payment', 'authorized',         'voided',             NULL, NULL),
  ('payment', 'authorized',         'failed',             NULL, NULL),
  ('payment', 'captured',           'refunded',           NULL, NULL),
  ('payment', 'captured',           'partially_refunded', NULL, NULL),
  ('payment', 'partially_refunded', 'refunded',           NULL, NULL);

CREATE FUNCTION idem.can_transition(machine text, from_state text, to_state text, row_data jsonb DEFAULT NULL)
  RETURNS boolean
  AS 'MODULE_PATHNAME', 'idem_can_transition'
  LANGUAGE C STABLE;
COMMENT ON FUNCTION idem.can_transition(text, text, text, jsonb) IS
  'Whether machine may move from_state -> to_state (its guard asked only when row_data is given); ERR_MACHINE_UNKNOWN / ERR_STATE_UNKNOWN for names it does not have.';

CREATE FUNCTION idem.check_transition(machine text, from_state text, to_state text, row_data jsonb DEFAULT NULL)
  RETURNS void
  AS 'MODULE_PATHNAME', 'idem_check_transition'
  LANGUAGE C STABLE;
COMMENT ON FUNCTION idem.check_transition(text, text, text, jsonb) IS
  'Raises ERR_INVALID_TRANSITION naming the machine, both states and what failed (terminal state, no such transition, the guard that does not hold).';

-- Every attempted transition of a row under idem.enforce_transitions.
CREATE TABLE idem.transition_log (
  log_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  machine      text COLLATE "C" NOT NULL,
  relid        regclass NOT NULL,
  table_name   text NOT NULL,                    -- the table's name when the transition happened
  row_key      text COLLATE "C",
  from_state   text,
  to_state     text,
  guard_name   text,
  guard_result boolean,
  outcome      text NOT NULL CHECK (outcome IN ('applied', 'skipped')),
  at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX transition_log_row_idx ON idem.transition_log (relid, row_key, at);
COMMENT ON TABLE idem.transition_log IS
  'Every transition idem.enforce_transitions let through (applied) or refused in skip mode (skipped), with its guard''s answer.';
SELECT pg_catalog.pg_extension_config_dump('idem.transition_log', '');

-- The trigger runs as the role that changes the row (and so do guards: never as the owner); it
-- writes the log as the log's owner, in C, so no role can write the log itself.
CREATE FUNCTION idem.enforce_transitions() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_enforce_transitions'
  LANGUAGE C;
COMMENT ON FUNCTION idem.enforce_transitions() IS
  'Row trigger (BEFORE INSERT OR UPDATE) with arguments (machine, status column [, key column [, ''raise'' | ''skip'']]): the column follows the machine; every transition is logged in idem.transition_log.';

-- ---------------------------------------------------------------------------------------------
-- The audit trail: every mutation attempt, in the caller's transaction (a rollback leaves no
-- row). Append-only for every role, the owner included: services write only through our
-- functions, nobody holds UPDATE/DELETE/TRUNCATE on it, and a trigger refuses them (the owner
-- too) except inside idem.purge_audit.

ALTER TABLE idem.keys
  ADD COLUMN mutation_type text NOT NULL DEFAULT 'create' CHECK (mutation_type IN ('create', 'capture', 'refund', 'void')),
  ADD COLUMN attempted_at timestamptz,               -- when the current attempt started
  ADD COLUMN attempts_in_generation integer NOT NULL DEFAULT 1,
  ADD COLUMN local_status text;
UPDATE idem.keys SET attempted_at = created_at WHERE attempted_at IS NULL;

CREATE TABLE idem.mutations (
  tenant_id        text COLLATE "C" NOT NULL,
  mutation_id      bigint GENERATED ALWAYS AS IDENTITY,
  scope_digest     bytea NOT NULL,
  client_key       text COLLATE "C" NOT NULL,      -- the key as the client sent it
  caller_id        text NOT NULL,
  resource         text NOT NULL,
  generation       integer,
  attempt          bigint,                         -- the fencing token of the attempt (NULL for a refusal)
  mutation_type    text NOT NULL CHECK (mutation_type IN ('create', 'capture', 'refund', 'void')),
  outcome          text NOT NULL CHECK (outcome IN ('replay', 'mismatch', 'in_progress', 'checkpoint', 'completed',
                                                    'released', 'resolved_by_operator')),
  handler_called   boolean NOT NULL,               -- whether the handler (the processor) was called
  order_id         text COLLATE "C",
  handler_response jsonb,                          -- e.g. {"charge_id": "ch_..."}
  local_status     text,                           -- e.g. capturing, paid, refunded
  error_message    text,
  recovery_point   text,
  retry_count      integer NOT NULL,               -- attempts this key has seen in its generation
  attempted_at     timestamptz NOT NULL,
  completed_at     timestamptz,
  PRIMARY KEY (tenant_id, mutation_id)
);
CREATE INDEX mutations_key_idx ON idem.mutations (tenant_id, client_key, attempted_at);
CREATE INDEX mutations_order_idx ON idem.mutations (order_id) WHERE order_id IS NOT NULL;
CREATE INDEX mutations_time_idx ON idem.mutations (attempted_at);
COMMENT ON TABLE idem.mutations IS
  'Append-only audit trail of every mutation attempt (reference §6.1); written by acquire/checkpoint/complete/release/resolve_stuck, purged only by idem.purge_audit.';
SELECT pg_catalog.pg_extension_config_dump('idem.mutations', '');

CREATE FUNCTION idem._allow_audit_purge(allowed boolean) RETURNS void
  AS 'MODULE_PATHNAME', 'idem_allow_audit_purge' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idem._allow_audit_purge(boolean) IS
  'Lets idem.purge_audit delete audit rows while it runs (cleared when it returns, and by any abort).';
CREATE FUNCTION idem._refuse_audit_change() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_refuse_audit_change' LANGUAGE C;
COMMENT ON FUNCTION idem._refuse_audit_change() IS
  'Trigger of idem.mutations and idem.transition_log: ERR_AUDIT_APPEND_ONLY for UPDATE, TRUNCATE and any DELETE but idem.purge_audit''s.';
CREATE TRIGGER mutations_append_only BEFORE UPDATE OR DELETE ON idem.mutations
  FOR EACH ROW EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER mutations_no_truncate BEFORE TRUNCATE ON idem.mutations
  FOR EACH STATEMENT EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER transition_log_append_only BEFORE UPDATE OR DELETE ON idem.transition_log
  FOR EACH ROW EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER transition_log_no_truncate BEFORE TRUNCATE ON idem.transition_log
  FOR EACH STATEMENT EXECUTE FUNCTION idem._refuse_audit_change();

-- One INSERT for every audit row.
CREATE FUNCTION idem._audit(p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text,
                            p_generation integer, p_attempt bigint, p_type text, p_outcome text,
                            p_handler_called boolean, p_order_id text, p_handler_response jsonb,
                            p_local_status text, p_error text, p_recovery_point text, p_retry_count integer,
                            p_attempted_at timestamptz, p_completed_at timestamptz)
  RETURNS void
  -- Called only by our SECURITY DEFINER functions.
  LANGUAGE sql VOLATILE
  BEGIN ATOMIC
    INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, generation, attempt,
                                mutation_type, outcome, handler_called, order_id, handler_response, local_status,
                                error_message, recovery_point, retry_count, attempted_at, completed_at)
    VALUES (p_tenant, p_digest, p_key, p_caller, p_resource, p_generation, p_attempt, p_type, p_outcome,
            p_handler_called, p_order_id, p_handler_response, p_local_status, p_error, p_recovery_point,
            p_retry_count, p_attempted_at, p_completed_at);
  END;

-- An audit row for what a holder just did to its record r.
CREATE FUNCTION idem._audit_holder(r idem.keys, p_outcome text, p_handler_called boolean, p_order_id text,
                                   p_handler_response jsonb, p_local_status text, p_error text,
                                   p_completed_at timestamptz)
  RETURNS void
  LANGUAGE sql VOLATILE
  BEGIN ATOMIC
    SELECT idem._audit(r.tenant_id, r.scope_digest, r.client_key, r.caller_id, r.resource, r.generation, r.attempt,
                       r.mutation_type, p_outcome, p_handler_called, p_order_id, p_handler_response, p_local_status,
                       p_error, r.recovery_point, r.attempts_in_generation, coalesce(r.attempted_at, r.created_at),
                       p_completed_at);
  END;

-- ---------------------------------------------------------------------------------------------
-- acquire gains mutation_type (create | capture | refund | void), recorded with every audit row;
-- refusals (replay unless idem.audit_replays is off, mismatch, in_progress) are audited here.

DROP FUNCTION idem.acquire(text, text, jsonb, text, text, interval, interval, text);
DROP FUNCTION idem.acquire(text, text, text, text, text, interval, interval, text);
DROP FUNCTION idem.acquire(text, text, bytea, text, text, interval, interval, text);
DROP FUNCTION idem._acquire(text, bytea, text, bytea, text, text, interval, interval, text);

CREATE FUNCTION idem._acquire(p_tenant text, p_digest bytea, p_key text, p_hash bytea,
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
BEGIN
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
                                  attempts_in_generation)
      VALUES (p_tenant, p_digest, 'in_progress', nextval('idem.fencing_token_seq'), 1 + v_retired,
              p_hash, idem.fingerprint_scheme(), p_caller, p_resource, p_key, v_lease, v_ttl,
              v_now + v_lease, v_now, v_now + v_lease + v_ttl, p_mutation_type, v_now, 1)
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
             attempted_at = v_now, attempts_in_generation = k.attempts_in_generation + 1
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
          attempts_in_generation = CASE WHEN v_decision = 'new_generation' THEN 1 ELSE k.attempts_in_generation + 1 END
       WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'acquired';
    END IF;
    RETURN res;
  END LOOP;
END $$;


CREATE FUNCTION idem.acquire(tenant text, key text, payload jsonb, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject',
                             mutation_type text DEFAULT 'create')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
BEGIN
  IF payload IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'payload must not be NULL',
      'Pass the request body; use ''{}'' or ''null'' for a request without one.');
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       idem.payload_hash(payload), caller, resource, lease, ttl, on_busy, mutation_type);
END $$;
COMMENT ON FUNCTION idem.acquire(text, text, jsonb, text, text, interval, interval, text, text) IS
  'Start (acquired), take over (resumed), replay, refuse (in_progress) or reject (mismatch) a mutation under an idempotency key.';

CREATE FUNCTION idem.acquire(tenant text, key text, payload text, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject',
                             mutation_type text DEFAULT 'create')
  RETURNS idem.acquire_result
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
BEGIN
  IF payload IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'payload must not be NULL',
      'Pass the request body; use ''{}'' or ''null'' for a request without one.');
  END IF;
  RETURN idem._acquire(tenant, idem.scope_digest(tenant, caller, resource, key), key,
                       idem.payload_hash(payload), caller, resource, lease, ttl, on_busy, mutation_type);
END $$;
COMMENT ON FUNCTION idem.acquire(text, text, text, text, text, interval, interval, text, text) IS
  'acquire with the payload as JSON text, parsed strictly (duplicate keys refused).';

CREATE FUNCTION idem.acquire(tenant text, key text, payload_hash bytea, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject',
                             mutation_type text DEFAULT 'create')
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
                       payload_hash, caller, resource, lease, ttl, on_busy, mutation_type);
END $$;
COMMENT ON FUNCTION idem.acquire(text, text, bytea, text, text, interval, interval, text, text) IS
  'acquire with a precomputed fingerprint (scheme idem.fingerprint_scheme()), so a client can send 32 bytes instead of the payload.';

-- ---------------------------------------------------------------------------------------------
-- The holder's calls append their audit row.

DROP FUNCTION idem.checkpoint(text, bigint, text, jsonb);
CREATE FUNCTION idem.checkpoint(handle text, attempt bigint, recovery_point text, data jsonb DEFAULT NULL,
                                handler_called boolean DEFAULT true)
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
  r.recovery_point := checkpoint.recovery_point;
  PERFORM idem._audit_holder(r, 'checkpoint', coalesce(handler_called, true), NULL, data, NULL, NULL, NULL);
  RETURN v_expires;
END $$;
COMMENT ON FUNCTION idem.checkpoint(text, bigint, text, jsonb, boolean) IS
  'Record progress (e.g. charge_created with the processor''s charge id) and extend the lease; handler_called => false for a step before the processor was called. Returns the new lease expiry.';

DROP FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb);
CREATE FUNCTION idem.complete(handle text, attempt bigint, status integer, headers jsonb, body bytea,
                              order_id text DEFAULT NULL, handler_response jsonb DEFAULT NULL,
                              local_status text DEFAULT NULL, handler_called boolean DEFAULT true)
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
COMMENT ON FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean) IS
  'Resolve the key with the response to replay (in the caller''s transaction, with the business write) and append its audit row. Stale attempt: ERR_LEASE_LOST.';

DROP FUNCTION idem.release(text, bigint, text);
CREATE FUNCTION idem.release(handle text, attempt bigint, error text DEFAULT NULL, handler_called boolean DEFAULT NULL)
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
  -- Unless told: after a checkpoint the handler was called (the checkpoint recorded what it did).
  PERFORM idem._audit_holder(r, 'released', coalesce(handler_called, r.recovery_point IS NOT NULL), NULL, NULL, NULL,
                             error, v_now);
END $$;
COMMENT ON FUNCTION idem.release(text, bigint, text, boolean) IS
  'Give the key back after a transient failure (5xx, timeout): the next request is a fresh attempt, or resumes at the last checkpoint. handler_called: whether the processor was called (default: whether a checkpoint was recorded).';

-- resolve_stuck appends its audit row too.
CREATE OR REPLACE FUNCTION idem.resolve_stuck(handle text, attempt bigint, reason text, status integer,
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
  PERFORM idem._audit_holder(r, 'resolved_by_operator', false, r.order_id, NULL, NULL,
                             'resolved by ' || session_user || ': ' || reason, v_now);
END $$;

-- ---------------------------------------------------------------------------------------------
-- Retention of the audit trail: the only way rows leave it.

CREATE FUNCTION idem.purge_audit(older_than interval DEFAULT '90 days', batch integer DEFAULT 10000)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_cutoff timestamptz;
  v_mutations integer;
  v_transitions integer;
BEGIN
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
COMMENT ON FUNCTION idem.purge_audit(interval, integer) IS
  'Deletes up to batch audit rows and up to batch transition log rows older than older_than (elapsed time, 90 days by default, at least idem.min_audit_retention); returns the rows removed. Call until 0.';

CREATE FUNCTION idem._min_audit_retention() RETURNS interval
  AS 'MODULE_PATHNAME', 'idem_min_audit_retention' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem._min_audit_retention() IS 'idem.min_audit_retention as an interval.';

CREATE FUNCTION idem._elapsed(value interval) RETURNS interval
  AS 'MODULE_PATHNAME', 'idem_elapsed' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem._elapsed(interval) IS 'The interval as elapsed time (a day is 24 hours, a month 30 days); ERR_ARGUMENT_INVALID unless positive.';

-- ---------------------------------------------------------------------------------------------
-- Identifiers derived from a key and its generation (core/keys/derived_ids.cpp).

CREATE FUNCTION idem.derive_order_id(tenant text, key text, generation integer, at timestamptz DEFAULT clock_timestamp())
  RETURNS text
  AS 'MODULE_PATHNAME', 'idem_derive_order_id'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem.derive_order_id(text, text, integer, timestamptz) IS
  'The reference §2.2 order id: 8 hex digits of the Unix seconds of at + the first 64 bits of SHA-256 over (tenant, key, generation); 24 characters, sortable by time.';

CREATE FUNCTION idem._handler_key(scope_digest bytea, generation integer) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_handler_key'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION idem.handler_key(handle text) RETURNS text
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_generation integer;
BEGIN
  SELECT k.generation INTO v_generation FROM idem.keys k
   WHERE k.tenant_id = idem._handle_tenant(handle) COLLATE "C" AND k.scope_digest = idem._handle_digest(handle);
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_LEASE_LOST', format('no record for key %s (expired and purged, or never acquired)', handle),
      'Acquire the key first; pass the handle acquire returned.');
  END IF;
  RETURN idem._handler_key(idem._handle_digest(handle), v_generation);
END $$;
COMMENT ON FUNCTION idem.handler_key(text) IS
  'The Idempotency-Key to send to a payment processor: the same for every attempt and resume of this generation of the key, another for the next generation.';

-- ---------------------------------------------------------------------------------------------
-- Forensics: the runbook's questions, one query each (docs/runbook.md).

CREATE FUNCTION idem.double_charges(since timestamptz DEFAULT now() - interval '24 hours')
  RETURNS TABLE (tenant_id text, client_key text, caller_id text, resource text, generation integer,
                 executions bigint, order_ids text[], charge_ids text[], first_attempt timestamptz,
                 last_attempt timestamptz)
  LANGUAGE sql STABLE AS $$
  -- Per idempotency record (tenant, scope) and generation: a key reused after its TTL makes a new
  -- order by design (key_reuse lists those). executions: attempts that called the handler. A
  -- resume that called it again and got the same charge back (the processor's own idempotency)
  -- is not a double charge; several executing attempts are, unless every one of them recorded a
  -- charge id and they are all the same.
  SELECT m.tenant_id, min(m.client_key), min(m.caller_id), min(m.resource), m.generation,
         count(DISTINCT m.attempt) FILTER (WHERE m.handler_called AND m.outcome IN ('checkpoint', 'completed')) AS executions,
         array_agg(DISTINCT m.order_id ORDER BY m.order_id) FILTER (WHERE m.order_id IS NOT NULL) AS order_ids,
         array_agg(DISTINCT m.handler_response ->> 'charge_id' ORDER BY m.handler_response ->> 'charge_id')
           FILTER (WHERE m.handler_response ? 'charge_id') AS charge_ids,
         min(m.attempted_at), max(m.attempted_at)
    FROM idem.mutations m
   WHERE m.attempted_at >= since
   GROUP BY m.tenant_id, m.scope_digest, m.generation
  HAVING count(DISTINCT m.order_id) > 1
      OR count(DISTINCT m.handler_response ->> 'charge_id') > 1
      OR count(DISTINCT m.attempt) FILTER (WHERE m.handler_called AND m.outcome IN ('checkpoint', 'completed')) >
         greatest(1, count(DISTINCT m.attempt) FILTER (WHERE m.handler_called AND m.outcome IN ('checkpoint', 'completed')
                                                       AND m.handler_response ? 'charge_id'))
   ORDER BY min(m.attempted_at) $$;
COMMENT ON FUNCTION idem.double_charges(timestamptz) IS
  'Did we charge twice? Idempotency records (per generation) with more than one distinct order id or charge id, or several handler-executing attempts not all shown to be one charge, attempted since `since`.';

CREATE FUNCTION idem.key_history(tenant text, key text) RETURNS SETOF idem.mutations
  LANGUAGE sql STABLE AS $$
  SELECT * FROM idem.mutations m WHERE m.tenant_id = tenant COLLATE "C" AND m.client_key = key COLLATE "C"
   ORDER BY m.attempted_at, m.mutation_id $$;
COMMENT ON FUNCTION idem.key_history(text, text) IS 'Every mutation attempt under one client key of a tenant, oldest first (runbook query 1).';

CREATE FUNCTION idem.order_trail(order_id text)
  RETURNS TABLE (at timestamptz, source text, what text, replay boolean, detail jsonb)
  LANGUAGE sql STABLE AS $$
  SELECT m.attempted_at, 'mutation', m.mutation_type || ' ' || m.outcome, m.outcome = 'replay',
         jsonb_build_object('tenant_id', m.tenant_id, 'client_key', m.client_key, 'generation', m.generation,
                            'handler_response', m.handler_response, 'local_status', m.local_status,
                            'error', m.error_message)
    FROM idem.mutations m WHERE m.order_id = order_trail.order_id COLLATE "C"
  UNION ALL
  SELECT t.at, 'transition', coalesce(t.from_state, '(new)') || ' -> ' || t.to_state, false,
         jsonb_build_object('machine', t.machine, 'table', t.table_name, 'outcome', t.outcome,
                            'guard', t.guard_name, 'guard_result', t.guard_result)
    FROM idem.transition_log t WHERE t.row_key = order_trail.order_id COLLATE "C"
   ORDER BY 1, 2 $$;
COMMENT ON FUNCTION idem.order_trail(text) IS
  'What happened to one order, oldest first: its mutations (create, refund, ..., replays marked) and its state transitions (runbook query 2).';

CREATE FUNCTION idem.recent_mutations(tenant text, since timestamptz DEFAULT now() - interval '1 hour')
  RETURNS SETOF idem.mutations
  LANGUAGE sql STABLE AS $$
  SELECT * FROM idem.mutations m WHERE m.tenant_id = tenant COLLATE "C" AND m.attempted_at >= since
   ORDER BY m.attempted_at, m.mutation_id $$;
COMMENT ON FUNCTION idem.recent_mutations(text, timestamptz) IS 'A tenant''s mutation attempts since `since` (runbook query 3).';

CREATE VIEW idem.stuck_leases AS
  SELECT k.tenant_id, k.client_key, k.caller_id, k.resource, idem._handle(k.tenant_id, k.scope_digest) AS handle,
         k.attempt, k.generation, k.status, k.recovery_point, k.recovery_data, k.lease_expires_at,
         k.last_error, k.attempted_at,
         CASE WHEN k.recovery_point IS NOT NULL THEN 'unresolved after a checkpoint: resumes, or idem.resolve_stuck'
              ELSE 'lease ran out, not taken over' END AS why
    FROM idem.keys k
   WHERE (k.status = 'in_progress' AND k.lease_expires_at < clock_timestamp())
      OR (k.status = 'released' AND k.recovery_point IS NOT NULL);
COMMENT ON VIEW idem.stuck_leases IS
  'Expired leases nobody took over, and unresolved work with a checkpoint (which never expires): what an operator looks at.';

CREATE FUNCTION idem.key_reuse(window_size interval DEFAULT '24 hours')
  RETURNS TABLE (tenant_id text, client_key text, caller_id text, resource text, order_ids text[],
                 generations integer[], first_attempt timestamptz, last_attempt timestamptz)
  LANGUAGE sql STABLE AS $$
  SELECT m.tenant_id, min(m.client_key), min(m.caller_id), min(m.resource),
         array_agg(DISTINCT m.order_id ORDER BY m.order_id), array_agg(DISTINCT m.generation ORDER BY m.generation),
         min(m.attempted_at), max(m.attempted_at)
    FROM idem.mutations m
   WHERE m.attempted_at >= clock_timestamp() - window_size AND m.order_id IS NOT NULL
   GROUP BY m.tenant_id, m.scope_digest
  HAVING count(DISTINCT m.order_id) > 1
   ORDER BY min(m.attempted_at) $$;
COMMENT ON FUNCTION idem.key_reuse(interval) IS 'The runbook''s alert: one idempotency record (tenant, caller, resource, key) that produced two or more order ids within the window.';

-- ---------------------------------------------------------------------------------------------
-- Privileges.

REVOKE ALL ON ALL TABLES IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA idem FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
  idem.acquire(text, text, jsonb, text, text, interval, interval, text, text),
  idem.acquire(text, text, text, text, text, interval, interval, text, text),
  idem.acquire(text, text, bytea, text, text, interval, interval, text, text),
  idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean),
  idem.checkpoint(text, bigint, text, jsonb, boolean), idem.release(text, bigint, text, boolean),
  idem.handler_key(text), idem.derive_order_id(text, text, integer, timestamptz),
  idem.can_transition(text, text, text, jsonb), idem.check_transition(text, text, text, jsonb),
  idem.enforce_transitions(),
  idem.guard_stock_available(jsonb), idem.guard_before_capture(jsonb)
  TO idem_service;
GRANT EXECUTE ON FUNCTION
  idem.double_charges(timestamptz), idem.key_history(text, text), idem.order_trail(text),
  idem.recent_mutations(text, timestamptz), idem.key_reuse(interval), idem._handle(text, bytea),
  idem.derive_order_id(text, text, integer, timestamptz), idem.can_transition(text, text, text, jsonb),
  idem.check_transition(text, text, text, jsonb)
  TO idem_auditor, idem_operator;
GRANT EXECUTE ON FUNCTION idem.purge_audit(interval, integer) TO idem_operator;
-- The machine tables are read by every role that checks a transition; operators change them.
GRANT SELECT ON idem.machine_states, idem.machine_transitions TO idem_service;
GRANT INSERT, UPDATE, DELETE ON idem.machine_states, idem.machine_transitions TO idem_operator;
GRANT SELECT ON ALL TABLES IN SCHEMA idem TO idem_auditor, idem_operator;
