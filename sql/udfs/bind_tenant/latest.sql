CREATE OR REPLACE FUNCTION idem.bind_tenant(role name, tenant text)
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
  IF tenant IS NULL OR tenant = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must be a non-empty tenant id');
  END IF;
  PERFORM idem._require_short_text(tenant, 'tenant');
  PERFORM idem._require_manages_binding(v_role, tenant, false);
  INSERT INTO idem.tenant_bindings (role_oid, tenant_id, bound_by, bound_at)
    VALUES (v_role, tenant, session_user, clock_timestamp()) ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $function$
;
COMMENT ON FUNCTION idem.bind_tenant(name,text) IS 'Binds role to tenant (true; false when it already was): sessions of that role, or of its members, act and read only for their bound tenants.';
REVOKE ALL ON FUNCTION idem.bind_tenant(name,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.bind_tenant(name,text) TO idem_operator;
