CREATE OR REPLACE FUNCTION idem.release(handle text, attempt bigint, error text DEFAULT NULL::text, handler_called boolean DEFAULT NULL::boolean)
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
  r := idem._holder_row(handle, attempt, 'release');
  v_now := clock_timestamp();
  -- Released before a checkpoint: history after the TTL, a fresh attempt until then. Released
  -- after one: it resumes at that checkpoint, and is never purged. Unless the holder says the
  -- handler was not called, the processor may hold a charge under this generation's key: the
  -- next attempt must carry the same payload.
  UPDATE idem.keys k SET status = 'released', last_error = error, lease_expires_at = NULL,
         expires_at = CASE WHEN r.recovery_point IS NULL THEN v_now + r.ttl END,
         payload_pinned = k.payload_pinned OR handler_called IS NOT FALSE
   -- The handle's tenant, not r's: a value of the column's collation ("C") is not the tenant that
   -- Citus delegated this call for (it compares the constants whole), and it refuses the query.
   WHERE k.tenant_id = idem._handle_tenant(handle) AND k.scope_digest = r.scope_digest;
  -- After a checkpoint the handler was called, unless told (the checkpoint recorded what it
  -- did); before one, NULL: nobody knows.
  PERFORM idem._audit_holder(r, 'released', CASE WHEN r.recovery_point IS NOT NULL THEN coalesce(handler_called, true)
                                                 ELSE handler_called END,
                             NULL, NULL, NULL, error, v_now);
END $function$
;
COMMENT ON FUNCTION idem.release(text,bigint,text,boolean) IS 'Give the key back after a transient failure (5xx, timeout): the next request is a fresh attempt, or resumes at the last checkpoint. handler_called: whether the processor was called (default: whether a checkpoint was recorded).';
REVOKE ALL ON FUNCTION idem.release(text,bigint,text,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.release(text,bigint,text,boolean) TO idem_service;

CREATE OR REPLACE FUNCTION idem.release(tenant text, handle text, attempt bigint, error text DEFAULT NULL::text, handler_called boolean DEFAULT NULL::boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_handle_tenant(tenant, handle);
  PERFORM idem.release(handle, attempt, error, handler_called);
END $function$
;
COMMENT ON FUNCTION idem.release(text,text,bigint,text,boolean) IS 'release, tenant first: on Citus it runs on the tenant''s node (idem.citus_distribute); the handle must be that tenant''s.';
REVOKE ALL ON FUNCTION idem.release(text,text,bigint,text,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.release(text,text,bigint,text,boolean) TO idem_service;
