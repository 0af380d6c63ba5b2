CREATE OR REPLACE FUNCTION idem._handle_secret(handle text)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_handle_secret$function$
;
COMMENT ON FUNCTION idem._handle_secret(text) IS 'The lease secret a holder''s handle carries, NULL for a plain handle; ERR_ARGUMENT_INVALID for anything acquire did not return.';
REVOKE ALL ON FUNCTION idem._handle_secret(text) FROM PUBLIC;
