CREATE OR REPLACE FUNCTION idem._audit_abandoned(p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text, p_generation integer, p_attempt bigint, p_type text, p_recovery_point text, p_recovery_data jsonb, p_retry_count integer, p_attempted_at timestamp with time zone, p_lease_end timestamp with time zone, p_by_attempt bigint)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, p_generation, p_attempt, p_type,
                      'abandoned',
                      (SELECT true FROM idem.mutations m
                        WHERE m.tenant_id = p_tenant AND m.client_key = p_key COLLATE "C"
                          AND m.attempted_at >= p_attempted_at AND m.scope_digest = p_digest
                          AND m.attempt = p_attempt AND m.outcome = 'checkpoint' AND m.handler_called
                        LIMIT 1),
                      NULL, p_recovery_data, NULL,
                      format('lease ran out at %s; taken over by attempt %s', p_lease_end, p_by_attempt),
                      p_recovery_point, p_retry_count, p_attempted_at, p_lease_end);
END $function$
;
COMMENT ON FUNCTION idem._audit_abandoned(text,bytea,text,text,text,integer,bigint,text,text,jsonb,integer,timestamp with time zone,timestamp with time zone,bigint) IS NULL;
REVOKE ALL ON FUNCTION idem._audit_abandoned(text,bytea,text,text,text,integer,bigint,text,text,jsonb,integer,timestamp with time zone,timestamp with time zone,bigint) FROM PUBLIC;
