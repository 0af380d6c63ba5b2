CREATE OR REPLACE FUNCTION idem._audit(p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text, p_generation integer, p_attempt bigint, p_type text, p_outcome text, p_handler_called boolean, p_order_id text, p_handler_response jsonb, p_local_status text, p_error text, p_recovery_point text, p_retry_count integer, p_attempted_at timestamp with time zone, p_completed_at timestamp with time zone)
 RETURNS void
 LANGUAGE c
 SET search_path TO 'pg_catalog', 'pg_temp'
AS 'MODULE_PATHNAME', $function$idem_audit$function$
;
COMMENT ON FUNCTION idem._audit(text,bytea,text,text,text,integer,bigint,text,text,boolean,text,jsonb,text,text,text,integer,timestamp with time zone,timestamp with time zone) IS NULL;
REVOKE ALL ON FUNCTION idem._audit(text,bytea,text,text,text,integer,bigint,text,text,boolean,text,jsonb,text,text,text,integer,timestamp with time zone,timestamp with time zone) FROM PUBLIC;
