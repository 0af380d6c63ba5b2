CREATE OR REPLACE FUNCTION idem.resolve_stuck(handle text, attempt bigint, reason text, status integer, body bytea DEFAULT '\x'::bytea, headers jsonb DEFAULT '{}'::jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  -- The operator acts without the holder's secret; messages name the record, never a secret.
  -- The tenant is checked before anything is read: another tenant's record is not even probed.
  PERFORM idem._require_tenant(idem._handle_tenant(handle));
  PERFORM idem._require_local_tenant(idem._handle_tenant(handle));  -- on Citus: its lock is its node's
  handle := idem._handle(idem._handle_tenant(handle), idem._handle_digest(handle));
  IF reason IS NULL OR btrim(reason) = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'reason must say why the record is resolved by hand',
      'For example: ''charge ch_123 verified at the processor; refunded manually''.');
  END IF;
  IF octet_length(reason) > 1024 THEN  -- it is kept in the record, the audit row and idem.operator_actions
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('reason is %s bytes; at most 1024', octet_length(reason)));
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
   WHERE k.tenant_id = idem._handle_tenant(handle) AND k.scope_digest = idem._handle_digest(handle);
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
         lease_expires_at = NULL, resolved_at = v_now, expires_at = v_now + r.ttl
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  INSERT INTO idem.operator_actions (tenant_id, scope_digest, action, attempt, generation, recovery_point,
                                     recovery_data, response_status, reason, performed_by, performed_at)
  VALUES (r.tenant_id, r.scope_digest, 'resolve_stuck', r.attempt, r.generation, r.recovery_point,
          r.recovery_data, resolve_stuck.status, reason, session_user, v_now);
  -- The holder's last checkpoint (a charge id, say) is what the trail knows it did: reconcile
  -- accounts the charge to this record.
  PERFORM idem._audit_holder(r, 'resolved_by_operator', false, r.order_id, r.recovery_data, NULL,
                             'resolved by ' || session_user || ': ' || reason, v_now);
END $function$
;
COMMENT ON FUNCTION idem.resolve_stuck(text,bigint,text,integer,bytea,jsonb) IS 'Operator: resolve unresolved work (an expired lease, or a release after a checkpoint) with the response retries will replay; logged in idem.operator_actions.';
REVOKE ALL ON FUNCTION idem.resolve_stuck(text,bigint,text,integer,bytea,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.resolve_stuck(text,bigint,text,integer,bytea,jsonb) TO idem_operator;

-- Every argument required: with defaults, a call of the form above whose five or six arguments
-- are all untyped (a driver's unknown-typed parameters) matched this form too and was refused as
-- not unique.
CREATE OR REPLACE FUNCTION idem.resolve_stuck(tenant text, handle text, attempt bigint, reason text, status integer, body bytea, headers jsonb)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_handle_tenant(tenant, handle);
  PERFORM idem.resolve_stuck(handle, attempt, reason, status, body, headers);
END $function$
;
COMMENT ON FUNCTION idem.resolve_stuck(text,text,bigint,text,integer,bytea,jsonb) IS 'resolve_stuck, tenant first: on Citus it runs on the tenant''s node (idem.citus_distribute); the handle must be that tenant''s.';
REVOKE ALL ON FUNCTION idem.resolve_stuck(text,text,bigint,text,integer,bytea,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.resolve_stuck(text,text,bigint,text,integer,bytea,jsonb) TO idem_operator;
