CREATE OR REPLACE FUNCTION idem._handle_digest(handle text)
 RETURNS bytea
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_handle_digest$function$
;
COMMENT ON FUNCTION idem._handle_digest(text) IS 'The scope digest named by a handle; raises ERR_ARGUMENT_INVALID for anything acquire did not return.';
REVOKE ALL ON FUNCTION idem._handle_digest(text) FROM PUBLIC;
