CREATE OR REPLACE FUNCTION idem.recent_mutations(tenant text, since timestamp with time zone DEFAULT (now() - '01:00:00'::interval))
 RETURNS SETOF idem.mutations
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT * FROM idem.mutations m WHERE m.tenant_id = tenant AND m.attempted_at >= since
   ORDER BY m.attempted_at, m.mutation_id $function$
;
COMMENT ON FUNCTION idem.recent_mutations(text,timestamp with time zone) IS 'A tenant''s mutation attempts since `since` (runbook query 3).';
REVOKE ALL ON FUNCTION idem.recent_mutations(text,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.recent_mutations(text,timestamp with time zone) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.recent_mutations(text,timestamp with time zone) TO idem_operator;
