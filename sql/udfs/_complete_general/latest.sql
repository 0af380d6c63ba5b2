CREATE OR REPLACE FUNCTION idem._complete_general(handle text, attempt bigint, status integer, headers jsonb, body bytea, order_id text DEFAULT NULL::text, handler_response jsonb DEFAULT NULL::jsonb, local_status text DEFAULT NULL::text, handler_called boolean DEFAULT true)
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
         lease_expires_at = NULL, resolved_at = v_now, expires_at = v_now + r.ttl
   -- The handle's tenant, not r's: a value of the column's collation ("C") is not the tenant that
   -- Citus delegated this call for (it compares the constants whole), and it refuses the query.
   WHERE k.tenant_id = idem._handle_tenant(handle) AND k.scope_digest = r.scope_digest;
  PERFORM idem._audit_holder(r, 'completed', handler_called, order_id, handler_response, local_status, NULL, v_now);
END $function$
;
COMMENT ON FUNCTION idem._complete_general(text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) IS 'The reference idem.complete hands every call to that is not the common case (checks, waits, refusals).';
REVOKE ALL ON FUNCTION idem._complete_general(text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) FROM PUBLIC;
