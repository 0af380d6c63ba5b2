CREATE OR REPLACE FUNCTION idem._require_flat_array(p_value bigint[], p_name text)
 RETURNS void
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT idem._require_flat_array(p_value::text[], p_name) $function$
;
COMMENT ON FUNCTION idem._require_flat_array(bigint[],text) IS NULL;
REVOKE ALL ON FUNCTION idem._require_flat_array(bigint[],text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION idem._require_flat_array(p_value text[], p_name text)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF array_ndims(p_value) > 1 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('%s must be a one-dimensional array, not %s-dimensional', p_name, array_ndims(p_value)));
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_flat_array(text[],text) IS NULL;
REVOKE ALL ON FUNCTION idem._require_flat_array(text[],text) FROM PUBLIC;
