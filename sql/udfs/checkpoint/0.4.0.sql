CREATE OR REPLACE FUNCTION idem.checkpoint(handle text, attempt bigint, recovery_point text, data jsonb DEFAULT NULL::jsonb, handler_called boolean DEFAULT true)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
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
   -- The handle's tenant, not r's: a value of the column's collation ("C") is not the tenant that
   -- Citus delegated this call for (it compares the constants whole), and it refuses the query.
   WHERE k.tenant_id = idem._handle_tenant(handle) AND k.scope_digest = r.scope_digest;
  r.recovery_point := checkpoint.recovery_point;
  PERFORM idem._audit_holder(r, 'checkpoint', coalesce(handler_called, true), NULL, data, NULL, NULL, NULL);
  RETURN v_expires;
END $function$
;
COMMENT ON FUNCTION idem.checkpoint(text,bigint,text,jsonb,boolean) IS 'Record progress (e.g. charge_created with the processor''s charge id) and extend the lease; handler_called => false for a step before the processor was called. Returns the new lease expiry.';
REVOKE ALL ON FUNCTION idem.checkpoint(text,bigint,text,jsonb,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.checkpoint(text,bigint,text,jsonb,boolean) TO idem_service;

CREATE OR REPLACE FUNCTION idem.checkpoint(tenant text, handle text, attempt bigint, recovery_point text, data jsonb DEFAULT NULL::jsonb, handler_called boolean DEFAULT true)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_handle_tenant(tenant, handle);
  RETURN idem.checkpoint(handle, attempt, recovery_point, data, handler_called);
END $function$
;
COMMENT ON FUNCTION idem.checkpoint(text,text,bigint,text,jsonb,boolean) IS 'checkpoint, tenant first: on Citus it runs on the tenant''s node (idem.citus_distribute); the handle must be that tenant''s.';
REVOKE ALL ON FUNCTION idem.checkpoint(text,text,bigint,text,jsonb,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.checkpoint(text,text,bigint,text,jsonb,boolean) TO idem_service;
