-- checkpoint / complete / release: what the holder of a lease may do, fenced by its attempt number.
-- A holder whose lease was taken over (a newer attempt) gets ERR_LEASE_LOST and changes nothing.

-- Locks the key for a holder and returns its row if `attempt` still holds the lease.
-- Blocking is right here: the only other lock holders are acquirers deciding in milliseconds.
CREATE FUNCTION idem._holder_row(p_handle text, p_attempt bigint, p_action text)
  RETURNS idem.keys
  -- Called only by checkpoint/complete/release, which run as the owner with a safe search_path.
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_digest bytea := idem._handle_digest(p_handle);
  v_tenant text := idem._handle_tenant(p_handle);
  r idem.keys;
BEGIN
  IF p_attempt IS NULL THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: attempt must not be NULL' USING ERRCODE = 'IK012',
      HINT = 'Pass the attempt column of the acquire result with the handle.';
  END IF;
  PERFORM pg_advisory_xact_lock(idem._lock_key(v_digest));
  SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant AND k.scope_digest = v_digest;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ERR_LEASE_LOST: cannot % key %: no such record (expired and purged, or never acquired)', p_action, p_handle
      USING ERRCODE = 'IK005', HINT = 'Do not record a result; acquire the key again.';
  END IF;
  IF r.status <> 'in_progress' OR r.attempt <> p_attempt THEN
    RAISE EXCEPTION 'ERR_LEASE_LOST: cannot % key % with attempt %: the record is % at attempt %', p_action, p_handle, p_attempt, r.status, r.attempt
      USING ERRCODE = 'IK005',
            HINT = 'Another attempt took over this key (or it was already resolved); do not record a result.';
  END IF;
  RETURN r;
END $$;
REVOKE ALL ON FUNCTION idem._holder_row(text, bigint, text) FROM PUBLIC;

CREATE FUNCTION idem.checkpoint(handle text, attempt bigint, recovery_point text, data jsonb DEFAULT NULL)
  RETURNS timestamptz
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.keys;
  v_expires timestamptz;
BEGIN
  IF recovery_point IS NULL OR recovery_point = '' THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: recovery_point must be a non-empty name such as ''charge_created''' USING ERRCODE = 'IK012';
  END IF;
  -- A lost checkpoint would resume from an older recovery point and repeat a side effect.
  PERFORM idem._require_durable_store();
  r := idem._holder_row(handle, attempt, 'checkpoint');
  v_expires := clock_timestamp() + r.lease_interval;
  UPDATE idem.keys k SET recovery_point = checkpoint.recovery_point, recovery_data = data, lease_expires_at = v_expires
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  RETURN v_expires;
END $$;
COMMENT ON FUNCTION idem.checkpoint(text, bigint, text, jsonb) IS
  'Record progress (e.g. charge_created with the processor''s charge id) and extend the lease; returns the new lease expiry.';

CREATE FUNCTION idem.complete(handle text, attempt bigint, status integer, headers jsonb, body bytea,
                              order_id text DEFAULT NULL, handler_response jsonb DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  IF status IS NULL OR status NOT BETWEEN 100 AND 599 THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: status must be an HTTP status code 100..599, got %', coalesce(status::text, 'NULL')
      USING ERRCODE = 'IK012';
  END IF;
  IF headers IS NOT NULL AND jsonb_typeof(headers) <> 'object' THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: headers must be a JSON object of header names to values, got a JSON %', jsonb_typeof(headers)
      USING ERRCODE = 'IK012';
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
COMMENT ON FUNCTION idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb) IS
  'Resolve the key with the response to replay (in the caller''s transaction, with the business write). Stale attempt: ERR_LEASE_LOST.';

CREATE FUNCTION idem.release(handle text, attempt bigint, error text DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  r := idem._holder_row(handle, attempt, 'release');
  v_now := clock_timestamp();
  -- The row stays (as released) until purge, so forensics see the failed attempt and its error.
  UPDATE idem.keys k SET status = 'released', last_error = error, lease_expires_at = NULL,
         expires_at = v_now + k.ttl
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
END $$;
COMMENT ON FUNCTION idem.release(text, bigint, text) IS
  'Give the key back after a transient failure (5xx, timeout): the next request with it is a fresh attempt, or resumes at the last checkpoint if there is one.';
