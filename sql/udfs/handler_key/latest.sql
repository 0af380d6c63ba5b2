CREATE OR REPLACE FUNCTION idem.handler_key(handle text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._raise('ERR_ARGUMENT_INVALID',
    'idem.handler_key(handle) was withdrawn in 0.3.5: it could answer for a later generation than the caller''s lease',
    'Read handler_key from the acquire result, or call idem.handler_key(handle, attempt).');
END $function$
;
COMMENT ON FUNCTION idem.handler_key(text) IS 'Withdrawn in 0.3.5 (raises ERR_ARGUMENT_INVALID): use acquire''s handler_key or idem.handler_key(handle, attempt).';
REVOKE ALL ON FUNCTION idem.handler_key(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.handler_key(text) TO idem_service;

CREATE OR REPLACE FUNCTION idem.handler_key(handle text, attempt bigint)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  v_tenant text := idem._handle_tenant(handle);
  v_digest bytea := idem._handle_digest(handle);
  v_secret text := idem._handle_secret(handle);
  v_plain  text;
  r idem.keys;
BEGIN
  PERFORM idem._require_tenant(v_tenant);
  v_plain := idem._handle(v_tenant, v_digest);  -- messages name the record, never the secret
  IF attempt IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'attempt must not be NULL',
      'Pass the attempt column of the acquire result with the handle.');
  END IF;
  SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant AND k.scope_digest = v_digest;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('no processor key for key %s: no such record (expired and purged, or never acquired)', v_plain),
      'Do not call the processor; acquire the key again.');
  END IF;
  IF r.status <> 'in_progress' OR r.attempt <> handler_key.attempt THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('no processor key for key %s with attempt %s: the record is %s at attempt %s, generation %s',
             v_plain, attempt, r.status, r.attempt, r.generation),
      'Another attempt took over this key (or it was resolved); do not call the processor.');
  END IF;
  IF r.lease_secret_hash IS NOT NULL
     AND (v_secret IS NULL OR sha256(convert_to(v_secret, 'UTF8')) <> r.lease_secret_hash) THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('no processor key for key %s with attempt %s: the handle does not carry this lease''s secret', v_plain, attempt),
      'Pass the handle column of the acquire result that leased the key, unchanged.');
  END IF;
  RETURN idem._handler_key(v_digest, r.generation);
END $function$
;
COMMENT ON FUNCTION idem.handler_key(text,bigint) IS 'The key to send the payment processor for this lease''s generation (acquire also returns it); ERR_LEASE_LOST unless handle and attempt are the live lease''s.';
REVOKE ALL ON FUNCTION idem.handler_key(text,bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.handler_key(text,bigint) TO idem_service;

CREATE OR REPLACE FUNCTION idem.handler_key(tenant text, handle text, attempt bigint)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_handle_tenant(tenant, handle);
  RETURN idem.handler_key(handle, attempt);
END $function$
;
COMMENT ON FUNCTION idem.handler_key(text,text,bigint) IS 'handler_key, tenant first: on Citus it runs on the tenant''s node (idem.citus_distribute); the handle must be that tenant''s.';
REVOKE ALL ON FUNCTION idem.handler_key(text,text,bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.handler_key(text,text,bigint) TO idem_service;
