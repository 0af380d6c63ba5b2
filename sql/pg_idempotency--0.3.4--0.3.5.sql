-- pg_idempotency 0.3.4 -> 0.3.5: corrections from the review of 0.3.4 (issue 20).
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.3.5'" to load this file. \quit

-- ==== 0.3.5: consumers bound to roles, the stuck-work path (issue 20.6, 20.7) ====
--
-- * Roles can be bound to outbox consumers (idem.bind_consumer / idem.unbind_consumer, by an
--   unbound operator). A session whose login role is, or is a member of, a bound role acts only
--   for those consumers: claim, ack, nack, consume_once (and an operator's outbox_replay,
--   outbox_discard, create_consumer) for another consumer raise ERR_CONSUMER_FORBIDDEN before
--   anything is read or written. Unbound roles (and superusers) act for every consumer, as before.
--   With no binding at all, the check costs no SQL: whether one exists is cached per backend, as
--   for tenant bindings (extension/binding_cache.cpp).
-- * idem.stuck_leases shows every unresolved attempt, a live lease too (the runbook sends the
--   operator there while a dead holder's lease still runs), with its age, the processor's key
--   (handler_key) and whether it is overdue.
-- * idem.retry_stuck(handle, attempt, reason) (operator, logged in idem.operator_actions): ends
--   the lease now, so the service's next request with the key resumes at the recovery point and
--   finishes the work itself (its order, its event), instead of an operator typing a response.

-- ---------------------------------------------------------------------------------------------
-- Consumer binding.

-- By role oid, as idem.tenant_bindings: a renamed role keeps its bindings, a role dropped and
-- created again under the same name does not inherit them.
CREATE TABLE idem.consumer_bindings (
  role_oid   oid NOT NULL,
  consumer   text COLLATE "C" NOT NULL,
  bound_by   name NOT NULL,
  bound_at   timestamptz NOT NULL,
  PRIMARY KEY (role_oid, consumer)
);
COMMENT ON TABLE idem.consumer_bindings IS
  'Roles (role_oid::regrole) bound to outbox consumers: a session whose login role is, or is a member of, a bound role claims, acks, nacks and consume_once''s only for those consumers.';
ALTER TABLE idem.consumer_bindings ENABLE ROW LEVEL SECURITY;
ALTER TABLE idem.consumer_bindings FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON idem.consumer_bindings TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY read_all ON idem.consumer_bindings FOR SELECT TO idem_auditor, idem_operator USING (true);
REVOKE ALL ON idem.consumer_bindings FROM PUBLIC;
GRANT SELECT ON idem.consumer_bindings TO idem_auditor, idem_operator;

-- Whether any consumer binding exists, cached per backend and forgotten when the table changes
-- (the triggers below): the outbox's calls read no table while nobody is bound.
CREATE FUNCTION idem._consumer_bindings_exist() RETURNS boolean
  AS 'MODULE_PATHNAME', 'idem_consumer_bindings_exist'
  LANGUAGE C STABLE;
REVOKE ALL ON FUNCTION idem._consumer_bindings_exist() FROM PUBLIC;
COMMENT ON FUNCTION idem._consumer_bindings_exist() IS
  'Whether idem.consumer_bindings holds any row (cached per backend, read under the latest snapshot, forgotten when the table changes).';

CREATE FUNCTION idem._consumer_bindings_changed() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_consumer_bindings_changed' LANGUAGE C;
REVOKE ALL ON FUNCTION idem._consumer_bindings_changed() FROM PUBLIC;
COMMENT ON FUNCTION idem._consumer_bindings_changed() IS
  'Trigger of idem.consumer_bindings: every backend forgets its cached "no bindings" when they change.';
CREATE TRIGGER consumer_bindings_changed AFTER INSERT OR UPDATE OR DELETE ON idem.consumer_bindings
  FOR EACH STATEMENT EXECUTE FUNCTION idem._consumer_bindings_changed();
CREATE TRIGGER consumer_bindings_truncated AFTER TRUNCATE ON idem.consumer_bindings
  FOR EACH STATEMENT EXECUTE FUNCTION idem._consumer_bindings_changed();
ALTER TABLE idem.consumer_bindings ENABLE ALWAYS TRIGGER consumer_bindings_changed;
ALTER TABLE idem.consumer_bindings ENABLE ALWAYS TRIGGER consumer_bindings_truncated;

-- The consumers the session is bound to, or NULL when it is unbound (no binding applies to its
-- login role, or it is a superuser). session_user, as for tenants: a binding is about who logged in.
CREATE FUNCTION idem._session_consumers() RETURNS text[]
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN r.rolsuper THEN NULL
              ELSE (SELECT array_agg(DISTINCT b.consumer ORDER BY b.consumer) FROM idem.consumer_bindings b
                      JOIN pg_catalog.pg_roles br ON br.oid = b.role_oid
                     WHERE pg_catalog.pg_has_role(r.oid, br.oid, 'MEMBER')) END
    FROM pg_catalog.pg_roles r WHERE r.rolname = session_user $$;
REVOKE ALL ON FUNCTION idem._session_consumers() FROM PUBLIC;

CREATE FUNCTION idem._require_consumer(p_consumer text) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_bound text[];
BEGIN
  IF NOT idem._consumer_bindings_exist() THEN RETURN; END IF;  -- nobody is bound: no SQL
  v_bound := idem._session_consumers();
  IF v_bound IS NOT NULL AND NOT coalesce(p_consumer = ANY (v_bound), false) THEN
    PERFORM idem._raise('ERR_CONSUMER_FORBIDDEN',
      format('role %s is bound to consumers %s, not %s', session_user,
             array_to_string(v_bound, ', '), coalesce(quote_literal(p_consumer), 'NULL')),
      'An operator binds roles to consumers with idem.bind_consumer(role, consumer); act only for your own consumers.');
  END IF;
END $$;
REVOKE ALL ON FUNCTION idem._require_consumer(text) FROM PUBLIC;
COMMENT ON FUNCTION idem._require_consumer(text) IS
  'ERR_CONSUMER_FORBIDDEN unless the session is unbound or bound to consumer.';

-- Every outbox call that names a consumer reads it here first: the binding is checked before the
-- consumer is even looked up, so a bound role learns nothing about other consumers.
CREATE OR REPLACE FUNCTION idem._outbox_consumer(p_consumer text) RETURNS idem.outbox_consumers
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.outbox_consumers;
BEGIN
  IF idem._consumer_bindings_exist() THEN
    PERFORM idem._require_consumer(p_consumer);
  END IF;
  SELECT * INTO r FROM idem.outbox_consumers c WHERE c.consumer = p_consumer;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_OUTBOX_CONSUMER_UNKNOWN', format('no outbox consumer %s', coalesce(quote_literal(p_consumer), 'NULL')),
      'Register it once with idem.create_consumer(consumer, topics).');
  END IF;
  RETURN r;
END $$;

-- Consumers see every tenant's events of their topics, so binding one is an act on every tenant:
-- only a session bound neither to tenants nor to consumers manages consumer bindings.
CREATE FUNCTION idem._require_manages_consumer_bindings(p_action text) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM idem._require_unbound(p_action);
  IF idem._consumer_bindings_exist() AND idem._session_consumers() IS NOT NULL THEN
    PERFORM idem._raise('ERR_CONSUMER_FORBIDDEN',
      format('role %s is bound to consumers %s; %s is for an unbound operator', session_user,
             array_to_string(idem._session_consumers(), ', '), p_action),
      'Run it from an operator role bound to no tenant and no consumer.');
  END IF;
END $$;
REVOKE ALL ON FUNCTION idem._require_manages_consumer_bindings(text) FROM PUBLIC;

CREATE FUNCTION idem.bind_consumer(role name, consumer text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  PERFORM idem._require_manages_consumer_bindings('bind_consumer');
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  -- A binding to a consumer that does not exist would leave the role acting for nothing.
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_consumers c WHERE c.consumer = bind_consumer.consumer) THEN
    PERFORM idem._raise('ERR_OUTBOX_CONSUMER_UNKNOWN', format('no outbox consumer %s', coalesce(quote_literal(consumer), 'NULL')),
      'Register it first with idem.create_consumer(consumer, topics).');
  END IF;
  INSERT INTO idem.consumer_bindings (role_oid, consumer, bound_by, bound_at)
    VALUES (v_role, consumer, session_user, clock_timestamp()) ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $$;
REVOKE ALL ON FUNCTION idem.bind_consumer(name, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.bind_consumer(name, text) TO idem_operator;
COMMENT ON FUNCTION idem.bind_consumer(name, text) IS
  'Binds role to an outbox consumer (true; false when it already was): sessions of that role, or of its members, claim, ack, nack and consume_once only for their bound consumers.';

CREATE FUNCTION idem.unbind_consumer(role name, consumer text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  PERFORM idem._require_manages_consumer_bindings('unbind_consumer');
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  DELETE FROM idem.consumer_bindings b WHERE b.role_oid = v_role AND b.consumer = unbind_consumer.consumer COLLATE "C";
  RETURN FOUND;
END $$;
REVOKE ALL ON FUNCTION idem.unbind_consumer(name, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.unbind_consumer(name, text) TO idem_operator;
COMMENT ON FUNCTION idem.unbind_consumer(name, text) IS
  'Removes one consumer binding (true when there was one). A role left with no consumer binding acts for every consumer again.';

-- A bound operator adds topics only to its own consumers (a new topic is every tenant's events).
CREATE OR REPLACE FUNCTION idem.create_consumer(consumer text, topics text[], max_attempts integer DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_missing text;
BEGIN
  PERFORM idem._require_consumer(consumer);
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

-- ---------------------------------------------------------------------------------------------
-- The stuck-work path: every unresolved attempt in idem.stuck_leases, and idem.retry_stuck.

-- The processor's key (the Idempotency-Key the service sent to the processor for this
-- generation) is what an operator looks a stuck charge up by: auditors and operators compute it
-- in the view, as they compute the handle; no service or consumer role may.
GRANT EXECUTE ON FUNCTION idem._handler_key(bytea, integer) TO idem_auditor, idem_operator;

-- Every unresolved attempt: in progress (a live lease too: the runbook sends the operator here
-- while a dead holder's lease still runs, 30 s by default), or released after a checkpoint.
-- Columns are only added at the end (CREATE OR REPLACE VIEW); it reads idem.keys as its owner
-- and filters for the reader; security_barrier as before.
CREATE OR REPLACE VIEW idem.stuck_leases WITH (security_barrier = true) AS
SELECT k.tenant_id, k.client_key, k.caller_id, k.resource,
       idem._handle(k.tenant_id, k.scope_digest) AS handle,
       k.attempt, k.generation, k.status, k.recovery_point, k.recovery_data,
       k.lease_expires_at, k.last_error, k.attempted_at,
       CASE WHEN k.status = 'released'
              THEN 'released after a checkpoint: the next request resumes there'
            WHEN k.lease_expires_at > clock_timestamp()
              THEN 'leased: its holder may still finish (idem.retry_stuck if it died)'
            WHEN k.expires_at <= clock_timestamp()
              THEN 'lease ran out and the record expired: the next request starts a new generation'
            WHEN k.recovery_point IS NOT NULL
              THEN 'lease ran out after a checkpoint: the next request resumes there'
            ELSE 'lease ran out, not taken over: the next request resumes'
       END AS why,
       clock_timestamp() - coalesce(k.attempted_at, k.created_at) AS age,
       (k.status = 'released' OR k.lease_expires_at <= clock_timestamp()) AS overdue,
       idem._handler_key(k.scope_digest, k.generation) AS handler_key
  FROM idem.keys k
 WHERE (k.status = 'in_progress' OR (k.status = 'released' AND k.recovery_point IS NOT NULL))
   AND idem._tenant_visible(k.tenant_id);
COMMENT ON VIEW idem.stuck_leases IS
  'Every unresolved attempt (in progress, live lease or not, or released after a checkpoint), with its lease end, age, last recovery point, the processor''s key of its generation (handler_key) and whether it is overdue (no live lease). Readers see their bound tenants'' rows.';

-- operator_actions logs retry_stuck too; a retry records no response.
ALTER TABLE idem.operator_actions DROP CONSTRAINT operator_actions_action_check;
ALTER TABLE idem.operator_actions ADD CONSTRAINT operator_actions_action_check
  CHECK (action IN ('resolve_stuck', 'retry_stuck'));
ALTER TABLE idem.operator_actions ALTER COLUMN response_status DROP NOT NULL;
ALTER TABLE idem.operator_actions ADD CONSTRAINT operator_actions_response_check
  CHECK (action <> 'resolve_stuck' OR response_status IS NOT NULL);

CREATE FUNCTION idem.retry_stuck(handle text, attempt bigint DEFAULT NULL, reason text DEFAULT NULL)
  RETURNS TABLE (retried_attempt bigint, status text, recovery_point text, resumable_at timestamptz)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_tenant text := idem._handle_tenant(handle);
  v_digest bytea := idem._handle_digest(handle);
  r idem.keys;
  v_now timestamptz;
  v_until timestamptz;
BEGIN
  -- The tenant is checked before anything is read: another tenant's record is not even probed.
  -- Messages name the record, never a secret.
  PERFORM idem._require_tenant(v_tenant);
  handle := idem._handle(v_tenant, v_digest);
  -- resolve_stuck's discipline: the key's lock without waiting (its holder completing or a request
  -- acquiring it holds it for a moment), then the row without waiting (under the key's lock only
  -- purge_expired could hold it). The lock is kept to the end of the transaction: until this
  -- commits, a request for the key gets in_progress and the holder's own calls wait (bounded).
  IF NOT idem._try_lock_key(idem._lock_key(v_digest)) THEN
    PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS', format('key %s is being written right now', handle),
      'Look at idem.stuck_leases again in a moment: idem.retry_stuck never waits.');
  END IF;
  BEGIN
    SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant COLLATE "C" AND k.scope_digest = v_digest
       FOR NO KEY UPDATE NOWAIT;
  EXCEPTION WHEN lock_not_available THEN
    PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS', format('key %s is being purged or written right now', handle),
      'Look at idem.stuck_leases again in a moment: idem.retry_stuck never waits.');
  END;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: there is no such record (never acquired, or expired and purged)', handle),
      'Take handle and attempt from idem.stuck_leases.');
  END IF;
  v_now := clock_timestamp();
  IF retry_stuck.attempt IS NOT NULL AND r.attempt <> retry_stuck.attempt THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('key %s moved on from attempt %s to attempt %s (%s)', handle, retry_stuck.attempt, r.attempt, r.status),
      'Look at idem.stuck_leases again before retrying it.');
  END IF;
  IF r.status = 'resolved' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: it was resolved at %s and replays its response', handle, r.resolved_at),
      'Nothing to retry; idem.key_history shows what happened.');
  END IF;
  IF r.status = 'released' AND r.recovery_point IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: it was released before any checkpoint, and its next request is a fresh attempt', handle),
      'Only unfinished work with a checkpoint, or an attempt in progress, needs an operator.');
  END IF;
  IF r.expires_at <= v_now THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: its record expired at %s, and its next request starts a new generation', handle, r.expires_at),
      'Nothing to retry: an expired record is history.');
  END IF;
  -- In progress: the lease ends now (or stays ended), so the next request with the key resumes
  -- at the recovery point with a new fencing token, and the old holder's calls get ERR_LEASE_LOST
  -- once it has. Until then a holder that is alive after all may still checkpoint (which leases
  -- it again) or complete: nothing runs twice either way. Released after a checkpoint: it
  -- resumes already; the call is only logged.
  IF r.status = 'in_progress' THEN
    v_until := least(r.lease_expires_at, v_now);
    UPDATE idem.keys k SET lease_expires_at = v_until
     WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  END IF;
  INSERT INTO idem.operator_actions (tenant_id, scope_digest, action, attempt, generation, recovery_point,
                                     recovery_data, response_status, reason, performed_by, performed_at)
  VALUES (r.tenant_id, r.scope_digest, 'retry_stuck', r.attempt, r.generation, r.recovery_point,
          r.recovery_data, NULL, coalesce(nullif(btrim(reason), ''), 'lease ended for the service to resume'),
          session_user, v_now);
  retried_attempt := r.attempt;
  status := r.status;
  recovery_point := r.recovery_point;
  resumable_at := coalesce(v_until, v_now);
  RETURN NEXT;
END $$;
REVOKE ALL ON FUNCTION idem.retry_stuck(text, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.retry_stuck(text, bigint, text) TO idem_operator;
COMMENT ON FUNCTION idem.retry_stuck(text, bigint, text) IS
  'Operator: ends the lease of unfinished work now, so the service''s next request with the key resumes at its recovery point and finishes it (logged in idem.operator_actions). Refuses records that are not stuck; never waits.';

-- ==== end 20.6/20.7 ====
