CREATE OR REPLACE FUNCTION idem._tenant_tables(p_tenant text)
 RETURNS text[]
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_tenant_tables$function$
;
COMMENT ON FUNCTION idem._tenant_tables(text) IS NULL;
REVOKE ALL ON FUNCTION idem._tenant_tables(text) FROM PUBLIC;
