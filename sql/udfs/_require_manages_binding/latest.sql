CREATE OR REPLACE FUNCTION idem._require_manages_binding(p_role oid, p_tenant text, p_removing boolean)
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_mine text[] := idem._session_tenants();
  v_theirs text[];
BEGIN
  IF v_mine IS NULL THEN RETURN; END IF;
  PERFORM idem._require_tenant(p_tenant);
  SELECT array_agg(b.tenant_id) INTO v_theirs FROM idem.tenant_bindings b WHERE b.role_oid = p_role;
  IF v_theirs IS NULL OR NOT v_theirs <@ v_mine
     OR p_role IN (SELECT r.oid FROM pg_catalog.pg_roles r
                    WHERE r.rolname IN ('idem_service', 'idem_consumer', 'idem_auditor', 'idem_operator'))
     OR (p_removing AND v_theirs <@ ARRAY[p_tenant]) THEN
    PERFORM idem._raise('ERR_TENANT_FORBIDDEN',
      format('role %s is bound to tenants %s: it may change only the bindings of roles bound within them, and not remove a role''s last one (role %s, tenant %L)',
             session_user, array_to_string(v_mine, ', '), p_role::regrole, p_tenant),
      'An unbound operator makes a role''s first binding and removes its last.');
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_manages_binding(oid,text,boolean) IS NULL;
REVOKE ALL ON FUNCTION idem._require_manages_binding(oid,text,boolean) FROM PUBLIC;
