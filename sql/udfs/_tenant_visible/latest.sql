CREATE OR REPLACE FUNCTION idem._tenant_visible(p_tenant text)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_bound text[];
BEGIN
  -- Without any binding nobody is bound: one index probe, nothing else.
  IF NOT EXISTS (SELECT 1 FROM idem.tenant_bindings) THEN RETURN true; END IF;
  v_bound := idem._session_tenants();
  RETURN v_bound IS NULL OR p_tenant = ANY (v_bound);
END $function$
;
COMMENT ON FUNCTION idem._tenant_visible(text) IS 'Whether the session may act for and read tenant: true when it is unbound or bound to it.';
REVOKE ALL ON FUNCTION idem._tenant_visible(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem._tenant_visible(text) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem._tenant_visible(text) TO idem_operator;
