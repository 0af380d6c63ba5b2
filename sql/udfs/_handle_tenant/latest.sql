CREATE OR REPLACE FUNCTION idem._handle_tenant(handle text)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_handle_tenant$function$
;
COMMENT ON FUNCTION idem._handle_tenant(text) IS 'The tenant named by a handle; raises ERR_ARGUMENT_INVALID for anything acquire did not return.';
REVOKE ALL ON FUNCTION idem._handle_tenant(text) FROM PUBLIC;
