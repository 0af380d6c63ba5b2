CREATE OR REPLACE FUNCTION idem._audit_holder(r idem.keys, p_outcome text, p_handler_called boolean, p_order_id text, p_handler_response jsonb, p_local_status text, p_error text, p_completed_at timestamp with time zone)
 RETURNS void
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'pg_temp'
BEGIN ATOMIC
 SELECT idem._audit((r).tenant_id, (r).scope_digest, (r).client_key, (r).caller_id, (r).resource, (r).generation, (r).attempt, (r).mutation_type, p_outcome, p_handler_called, p_order_id, p_handler_response, p_local_status, p_error, (r).recovery_point, (r).attempts_in_generation, COALESCE((r).attempted_at, (r).created_at), p_completed_at) AS _audit;
END
;
COMMENT ON FUNCTION idem._audit_holder(idem.keys,text,boolean,text,jsonb,text,text,timestamp with time zone) IS NULL;
REVOKE ALL ON FUNCTION idem._audit_holder(idem.keys,text,boolean,text,jsonb,text,text,timestamp with time zone) FROM PUBLIC;
