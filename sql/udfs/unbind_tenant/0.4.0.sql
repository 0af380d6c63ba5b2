CREATE OR REPLACE FUNCTION idem.unbind_tenant(role name, tenant text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  PERFORM idem._require_manages_binding(v_role, tenant, true);
  DELETE FROM idem.tenant_bindings b WHERE b.role_oid = v_role AND b.tenant_id = tenant;
  RETURN FOUND;
END $function$
;
COMMENT ON FUNCTION idem.unbind_tenant(name,text) IS 'Removes one binding (true when there was one). A role left with no binding acts for every tenant again: only an unbound operator may remove the last one.';
REVOKE ALL ON FUNCTION idem.unbind_tenant(name,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.unbind_tenant(name,text) TO idem_operator;
