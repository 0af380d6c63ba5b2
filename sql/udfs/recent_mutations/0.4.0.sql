CREATE OR REPLACE FUNCTION idem.recent_mutations(tenant text, since timestamp with time zone DEFAULT (now() - '01:00:00'::interval))
 RETURNS SETOF idem.mutations
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
BEGIN
  IF tenant IS NULL OR since IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant and since are required: a NULL would answer that nothing happened',
      'For the last hour: idem.recent_mutations(''<tenant>'', now() - interval ''1 hour'').');
  END IF;
  RETURN QUERY
  SELECT * FROM idem.mutations m WHERE m.tenant_id = tenant AND m.attempted_at >= since
   ORDER BY m.attempted_at, m.mutation_id;
END $function$
;
COMMENT ON FUNCTION idem.recent_mutations(text,timestamp with time zone) IS 'A tenant''s mutation attempts since `since` (runbook query 3).';
REVOKE ALL ON FUNCTION idem.recent_mutations(text,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.recent_mutations(text,timestamp with time zone) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.recent_mutations(text,timestamp with time zone) TO idem_operator;
