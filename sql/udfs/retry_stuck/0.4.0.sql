CREATE OR REPLACE FUNCTION idem.retry_stuck(handle text, attempt bigint DEFAULT NULL::bigint, reason text DEFAULT NULL::text)
 RETURNS TABLE(retried_attempt bigint, status text, recovery_point text, resumable_at timestamp with time zone)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
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
  PERFORM idem._require_local_tenant(v_tenant);  -- on Citus: its lock is its node's
  handle := idem._handle(v_tenant, v_digest);
  IF octet_length(reason) > 1024 THEN  -- it is kept in the record, the audit row and idem.operator_actions
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('reason is %s bytes; at most 1024', octet_length(reason)));
  END IF;
  -- resolve_stuck's discipline: the key's lock without waiting (its holder completing or a request
  -- acquiring it holds it for a moment), then the row without waiting (under the key's lock only
  -- purge_expired could hold it). The lock is kept to the end of the transaction: until this
  -- commits, a request for the key gets in_progress and the holder's own calls wait (bounded).
  IF NOT idem._try_lock_key(idem._lock_key(v_digest)) THEN
    PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS', format('key %s is being written right now', handle),
      'Look at idem.stuck_leases again in a moment: idem.retry_stuck never waits.');
  END IF;
  BEGIN
    SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant AND k.scope_digest = v_digest
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
END $function$
;
COMMENT ON FUNCTION idem.retry_stuck(text,bigint,text) IS 'Operator: ends the lease of unfinished work now, so the service''s next request with the key resumes at its recovery point and finishes it (logged in idem.operator_actions). Refuses records that are not stuck; never waits.';
REVOKE ALL ON FUNCTION idem.retry_stuck(text,bigint,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.retry_stuck(text,bigint,text) TO idem_operator;

-- No defaults: retry_stuck(handle, NULL, reason) must still name the form above alone.
CREATE OR REPLACE FUNCTION idem.retry_stuck(tenant text, handle text, attempt bigint, reason text)
 RETURNS TABLE(retried_attempt bigint, status text, recovery_point text, resumable_at timestamp with time zone)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_handle_tenant(tenant, handle);
  RETURN QUERY SELECT * FROM idem.retry_stuck(handle, attempt, reason);
END $function$
;
COMMENT ON FUNCTION idem.retry_stuck(text,text,bigint,text) IS 'retry_stuck, tenant first: on Citus it runs on the tenant''s node (idem.citus_distribute); the handle must be that tenant''s.';
REVOKE ALL ON FUNCTION idem.retry_stuck(text,text,bigint,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.retry_stuck(text,text,bigint,text) TO idem_operator;
