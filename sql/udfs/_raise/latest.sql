CREATE OR REPLACE FUNCTION idem._raise(name text, message text, hint text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_raise$function$
;
COMMENT ON FUNCTION idem._raise(text,text,text) IS 'Raises our error `name` (e.g. ERR_LEASE_LOST) with its SQLSTATE from the one error table; message without the name.';
REVOKE ALL ON FUNCTION idem._raise(text,text,text) FROM PUBLIC;
