CREATE OR REPLACE FUNCTION idem._session_unbound()
 RETURNS boolean
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT NOT EXISTS (SELECT 1 FROM idem.tenant_bindings) OR idem._session_tenants() IS NULL $function$
;
COMMENT ON FUNCTION idem._session_unbound() IS NULL;
REVOKE ALL ON FUNCTION idem._session_unbound() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem._session_unbound() TO idem_operator;
