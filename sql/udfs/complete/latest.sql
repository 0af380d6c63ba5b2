CREATE OR REPLACE FUNCTION idem.complete(handle text, attempt bigint, status integer, headers jsonb, body bytea, order_id text DEFAULT NULL::text, handler_response jsonb DEFAULT NULL::jsonb, local_status text DEFAULT NULL::text, handler_called boolean DEFAULT true)
 RETURNS void
 LANGUAGE c
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS 'MODULE_PATHNAME', $function$idem_complete$function$
;
COMMENT ON FUNCTION idem.complete(text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) IS 'Resolve the key with the response to replay (in the caller''s transaction, with the business write) and append its audit row. Stale attempt: ERR_LEASE_LOST.';
REVOKE ALL ON FUNCTION idem.complete(text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.complete(text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) TO idem_service;

CREATE OR REPLACE FUNCTION idem.complete(tenant text, handle text, attempt bigint, status integer, headers jsonb, body bytea, order_id text DEFAULT NULL::text, handler_response jsonb DEFAULT NULL::jsonb, local_status text DEFAULT NULL::text, handler_called boolean DEFAULT true)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_handle_tenant(tenant, handle);
  PERFORM idem.complete(handle, attempt, status, headers, body, order_id, handler_response, local_status, handler_called);
END $function$
;
COMMENT ON FUNCTION idem.complete(text,text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) IS 'complete, tenant first: on Citus it runs on the tenant''s node (idem.citus_distribute); the handle must be that tenant''s.';
REVOKE ALL ON FUNCTION idem.complete(text,text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.complete(text,text,bigint,integer,jsonb,bytea,text,jsonb,text,boolean) TO idem_service;
