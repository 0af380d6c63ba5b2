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
