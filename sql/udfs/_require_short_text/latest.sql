CREATE OR REPLACE FUNCTION idem._require_short_text(p_value text, p_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  -- The bound of a tenant and of every scope part (core/keys/key_validation.hpp): what an index
  -- row holds with room to spare.
  IF octet_length(p_value) > 256 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('%s is %s bytes; at most 256', p_name, octet_length(p_value)));
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_short_text(text,text) IS NULL;
REVOKE ALL ON FUNCTION idem._require_short_text(text,text) FROM PUBLIC;
