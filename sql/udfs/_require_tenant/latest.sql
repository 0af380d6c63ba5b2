CREATE OR REPLACE FUNCTION idem._require_tenant(p_tenant text)
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF NOT idem._tenant_visible(p_tenant) THEN
    PERFORM idem._raise('ERR_TENANT_FORBIDDEN',
      format('role %s is bound to tenants %s, not %s', session_user,
             array_to_string(idem._session_tenants(), ', '), coalesce(quote_literal(p_tenant), 'NULL')),
      'An operator binds roles to tenants with idem.bind_tenant(role, tenant); act only for your own tenants.');
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_tenant(text) IS NULL;
REVOKE ALL ON FUNCTION idem._require_tenant(text) FROM PUBLIC;
