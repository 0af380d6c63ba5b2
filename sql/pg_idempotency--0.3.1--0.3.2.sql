-- pg_idempotency 0.3.1 -> 0.3.2: the hot path in C (issue 11, "The hot path"; docs/hot-path.md).
--
-- * idem._audit, the audit trail's one INSERT, is C with a kept plan (same signature, same row).
-- * idem.complete and the idem.acquire overloads are C: the common call runs through plans
--   prepared once per backend and kept. Every other call (an argument to refuse, a lock to wait for, a lease lost,
--   a takeover, a resume, a snapshot older than READ COMMITTED's) goes to the PL/pgSQL reference
--   they were until now, renamed idem._complete_general and idem._acquire_general, which decides
--   and names the outcome: one rule, one message, in one place. The C path hands over before it
--   writes anything and holding nothing it took.
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.3.2'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- The audit INSERT.

CREATE OR REPLACE FUNCTION idem._audit(p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text,
                                       p_generation integer, p_attempt bigint, p_type text, p_outcome text,
                                       p_handler_called boolean, p_order_id text, p_handler_response jsonb,
                                       p_local_status text, p_error text, p_recovery_point text, p_retry_count integer,
                                       p_attempted_at timestamptz, p_completed_at timestamptz)
  RETURNS void
  AS 'MODULE_PATHNAME', 'idem_audit'
  LANGUAGE C VOLATILE SET search_path = pg_catalog, pg_temp;

-- ---------------------------------------------------------------------------------------------
-- complete.

-- The PL/pgSQL complete of 0.3.1, as the general path (its body names its own arguments, so it
-- is created again under its new name rather than renamed).
DROP FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean);
CREATE FUNCTION idem._complete_general(handle text, attempt bigint, status integer, headers jsonb, body bytea,
                              order_id text DEFAULT NULL, handler_response jsonb DEFAULT NULL,
                              local_status text DEFAULT NULL, handler_called boolean DEFAULT true)
  RETURNS void
  -- Called only by idem.complete (C), as the owner.
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
  UPDATE idem.keys k SET status = 'resolved', response_status = _complete_general.status,
         response_headers = coalesce(headers, '{}'::jsonb), response_body = coalesce(body, ''::bytea),
         order_id = _complete_general.order_id, handler_response = _complete_general.handler_response,
         local_status = _complete_general.local_status,
         lease_expires_at = NULL, resolved_at = v_now, expires_at = v_now + k.ttl
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  PERFORM idem._audit_holder(r, 'completed', handler_called, order_id, handler_response, local_status, NULL, v_now);
END $$;
REVOKE ALL ON FUNCTION idem._complete_general(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean) FROM PUBLIC;
COMMENT ON FUNCTION idem._complete_general(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean) IS
  'The reference idem.complete hands every call to that is not the common case (checks, waits, refusals).';

CREATE FUNCTION idem.complete(handle text, attempt bigint, status integer, headers jsonb, body bytea,
                              order_id text DEFAULT NULL, handler_response jsonb DEFAULT NULL,
                              local_status text DEFAULT NULL, handler_called boolean DEFAULT true)
  RETURNS void
  AS 'MODULE_PATHNAME', 'idem_complete'
  LANGUAGE C VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off;
COMMENT ON FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean) IS
  'Resolve the key with the response to replay (in the caller''s transaction, with the business write) and append its audit row. Stale attempt: ERR_LEASE_LOST.';
REVOKE ALL ON FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb, text, boolean) TO idem_service;

-- ---------------------------------------------------------------------------------------------
-- acquire: the three overloads become C (extension/hot_path/acquire_overloads.cpp), with the same
-- checks, messages, defaults, settings and grants; the PL/pgSQL idem._acquire they called stays,
-- renamed, as the general path.

ALTER FUNCTION idem._acquire(text, bytea, text, bytea, text, text, interval, interval, text, text) RENAME TO _acquire_general;
COMMENT ON FUNCTION idem._acquire_general(text, bytea, text, bytea, text, text, interval, interval, text, text) IS
  'The reference the idem.acquire overloads hand every call to that is not a new key, a replay or a refusal without a wait.';

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload jsonb, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject',
                             mutation_type text DEFAULT 'create')
  RETURNS idem.acquire_result
  AS 'MODULE_PATHNAME', 'idem_acquire_jsonb'
  LANGUAGE C VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off;

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload text, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject',
                             mutation_type text DEFAULT 'create')
  RETURNS idem.acquire_result
  AS 'MODULE_PATHNAME', 'idem_acquire_text'
  LANGUAGE C VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off;

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload_hash bytea, caller text DEFAULT '',
                             resource text DEFAULT '', lease interval DEFAULT NULL,
                             ttl interval DEFAULT NULL, on_busy text DEFAULT 'reject',
                             mutation_type text DEFAULT 'create')
  RETURNS idem.acquire_result
  AS 'MODULE_PATHNAME', 'idem_acquire_hash'
  LANGUAGE C VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off;

-- ---------------------------------------------------------------------------------------------
-- The invariants of idem.keys and idem.mutations move from CHECK constraints to one C row
-- trigger: PostgreSQL parses every CHECK expression again in each statement that writes the
-- table, which cost about 14 us per write of a record. Same rules, same names, same SQLSTATE
-- (23514) and message (extension/record_invariants.cpp).

CREATE FUNCTION idem._check_invariants() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_check_invariants' LANGUAGE C;
REVOKE ALL ON FUNCTION idem._check_invariants() FROM PUBLIC;
COMMENT ON FUNCTION idem._check_invariants() IS
  'Trigger of idem.keys and idem.mutations: 23514 for a row that breaks one of their invariants (once CHECK constraints of the same names).';

ALTER TABLE idem.keys
  DROP CONSTRAINT keys_attempt_check, DROP CONSTRAINT keys_check, DROP CONSTRAINT keys_check2,
  DROP CONSTRAINT keys_generation_check, DROP CONSTRAINT keys_history_check,
  DROP CONSTRAINT keys_mutation_type_check, DROP CONSTRAINT keys_payload_hash_check,
  DROP CONSTRAINT keys_response_status_check, DROP CONSTRAINT keys_scope_digest_check,
  DROP CONSTRAINT keys_status_check, DROP CONSTRAINT keys_tenant_id_check;
CREATE TRIGGER keys_invariants BEFORE INSERT OR UPDATE ON idem.keys
  FOR EACH ROW EXECUTE FUNCTION idem._check_invariants();

ALTER TABLE idem.mutations DROP CONSTRAINT mutations_mutation_type_check, DROP CONSTRAINT mutations_outcome_check;
CREATE TRIGGER mutations_invariants BEFORE INSERT ON idem.mutations
  FOR EACH ROW EXECUTE FUNCTION idem._check_invariants();
-- A CHECK holds whatever session_replication_role says (a logical replication apply worker runs
-- as replica); so do these.
ALTER TABLE idem.keys ENABLE ALWAYS TRIGGER keys_invariants;
ALTER TABLE idem.mutations ENABLE ALWAYS TRIGGER mutations_invariants;

-- ---------------------------------------------------------------------------------------------
-- Whether any tenant binding exists is cached per backend by the hot path; every change to the
-- bindings (also a superuser's direct DML or TRUNCATE) makes every backend forget it by its next
-- transaction, as docs/security.md says a binding takes effect.

CREATE FUNCTION idem._tenant_bindings_changed() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_tenant_bindings_changed' LANGUAGE C;
REVOKE ALL ON FUNCTION idem._tenant_bindings_changed() FROM PUBLIC;
COMMENT ON FUNCTION idem._tenant_bindings_changed() IS
  'Trigger of idem.tenant_bindings: every backend forgets its cached "no bindings" when they change.';
CREATE TRIGGER tenant_bindings_changed AFTER INSERT OR UPDATE OR DELETE ON idem.tenant_bindings
  FOR EACH STATEMENT EXECUTE FUNCTION idem._tenant_bindings_changed();
CREATE TRIGGER tenant_bindings_truncated AFTER TRUNCATE ON idem.tenant_bindings
  FOR EACH STATEMENT EXECUTE FUNCTION idem._tenant_bindings_changed();
ALTER TABLE idem.tenant_bindings ENABLE ALWAYS TRIGGER tenant_bindings_changed;
ALTER TABLE idem.tenant_bindings ENABLE ALWAYS TRIGGER tenant_bindings_truncated;

-- ---------------------------------------------------------------------------------------------
-- complete as a HOT update. complete moves expires_at (to resolution + TTL), and the purge's index
-- was on expires_at, so every complete wrote new index entries. The purge now finds records by
-- purge_after = attempted_at + ttl, NULL exactly when expires_at is (unresolved work with a
-- checkpoint never expires). Every write that sets expires_at sets it to now + ttl or later, and
-- now is never before attempted_at, so purge_after <= expires_at: every record that became
-- history is found, at the same moment as before; the purge passes over one whose purge_after
-- came but whose expires_at has not (a record resolved after a long handler, for that long).
-- complete changes neither attempted_at nor ttl, so with room on the page (fillfactor 80) its
-- UPDATE is HOT. Adding the column rewrites idem.keys (an ACCESS EXCLUSIVE lock for as long as
-- that takes on a large store).

ALTER TABLE idem.keys SET (fillfactor = 80);
-- _audit_holder takes the record's row type in a BEGIN ATOMIC body, which blocks a rewrite of the
-- table: dropped and created again, the same.
DROP FUNCTION idem._audit_holder(idem.keys, text, boolean, text, jsonb, text, text, timestamptz);
ALTER TABLE idem.keys ADD COLUMN purge_after timestamptz GENERATED ALWAYS AS (
  CASE WHEN expires_at IS NOT NULL
       THEN to_timestamp(extract(epoch FROM (coalesce(attempted_at, created_at) - 'epoch'::timestamptz) + ttl))
  END) STORED;
COMMENT ON COLUMN idem.keys.purge_after IS
  'When purge_expired starts looking at the record: attempted_at + ttl (never after expires_at), NULL when expires_at is NULL. Not moved by complete, whose UPDATE is HOT.';
CREATE INDEX keys_purge_after_idx ON idem.keys (purge_after) WHERE purge_after IS NOT NULL;
DROP INDEX idem.keys_expires_at_idx;

-- An audit row for what a holder just did to its record r.
CREATE FUNCTION idem._audit_holder(r idem.keys, p_outcome text, p_handler_called boolean, p_order_id text,
                                   p_handler_response jsonb, p_local_status text, p_error text,
                                   p_completed_at timestamptz)
  RETURNS void
  LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
  BEGIN ATOMIC
    SELECT idem._audit(r.tenant_id, r.scope_digest, r.client_key, r.caller_id, r.resource, r.generation, r.attempt,
                       r.mutation_type, p_outcome, p_handler_called, p_order_id, p_handler_response, p_local_status,
                       p_error, r.recovery_point, r.attempts_in_generation, coalesce(r.attempted_at, r.created_at),
                       p_completed_at);
  END;
REVOKE ALL ON FUNCTION idem._audit_holder(idem.keys, text, boolean, text, jsonb, text, text, timestamptz) FROM PUBLIC;

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
  -- By purge_after (indexed, never after expires_at; complete does not move it), then expires_at
  -- itself: a record whose purge_after passed but which is not history yet is passed over.
  FOR c IN SELECT k.tenant_id, k.scope_digest FROM idem.keys k
            WHERE k.purge_after < clock_timestamp() AND k.expires_at < clock_timestamp()
            ORDER BY k.purge_after LOOP
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
