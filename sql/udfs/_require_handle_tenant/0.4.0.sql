CREATE OR REPLACE FUNCTION idem._require_handle_tenant(p_tenant text, p_handle text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF p_tenant IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must not be NULL');
  END IF;
  IF p_handle IS NOT NULL AND idem._handle_tenant(p_handle) IS DISTINCT FROM p_tenant THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('the handle belongs to tenant %s, not to %s', quote_literal(idem._handle_tenant(p_handle)), quote_literal(p_tenant)),
      'Pass the tenant the key was acquired for.');
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_handle_tenant(text,text) IS NULL;
REVOKE ALL ON FUNCTION idem._require_handle_tenant(text,text) FROM PUBLIC;
