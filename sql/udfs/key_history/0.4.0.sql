CREATE OR REPLACE FUNCTION idem.key_history(tenant text, key text)
 RETURNS SETOF idem.mutations
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT * FROM idem.mutations m WHERE m.tenant_id = tenant AND m.client_key = key COLLATE "C"
   ORDER BY m.attempted_at, m.mutation_id $function$
;
COMMENT ON FUNCTION idem.key_history(text,text) IS 'Every mutation attempt under one client key of a tenant, oldest first (runbook query 1).';
REVOKE ALL ON FUNCTION idem.key_history(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.key_history(text,text) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.key_history(text,text) TO idem_operator;
