CREATE OR REPLACE FUNCTION idem._holder_row(p_handle text, p_attempt bigint, p_action text)
 RETURNS idem.keys
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_digest bytea := idem._handle_digest(p_handle);
  v_tenant text := idem._handle_tenant(p_handle);
  v_lock   bigint := idem._lock_key(v_digest);
  v_deadline timestamptz;
  v_secret text := idem._handle_secret(p_handle);
  r idem.keys;
BEGIN
  PERFORM idem._require_tenant(v_tenant);
  PERFORM idem._require_local_tenant(v_tenant);  -- on Citus: its lock is its node's
  -- Messages name the record, never the secret (they reach logs).
  p_handle := idem._handle(v_tenant, v_digest);
  IF p_attempt IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'attempt must not be NULL',
      'Pass the attempt column of the acquire result with the handle.');
  END IF;
  WHILE NOT idem._try_lock_key(v_lock) LOOP
    SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant AND k.scope_digest = v_digest;
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
  SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant AND k.scope_digest = v_digest
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
END $function$
;
COMMENT ON FUNCTION idem._holder_row(text,bigint,text) IS NULL;
REVOKE ALL ON FUNCTION idem._holder_row(text,bigint,text) FROM PUBLIC;
