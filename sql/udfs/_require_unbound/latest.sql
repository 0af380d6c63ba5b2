CREATE OR REPLACE FUNCTION idem._require_unbound(p_action text)
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF NOT idem._session_unbound() THEN
    PERFORM idem._raise('ERR_TENANT_FORBIDDEN',
      format('role %s is bound to tenants %s; %s acts on every tenant', session_user,
             array_to_string(idem._session_tenants(), ', '), p_action),
      'Run it from an unbound role (a global operator or the maintenance job).');
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_unbound(text) IS NULL;
REVOKE ALL ON FUNCTION idem._require_unbound(text) FROM PUBLIC;
