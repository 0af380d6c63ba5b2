CREATE OR REPLACE FUNCTION idem._owner_lock_key(p_tenant text, p_key text)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT idem._lock_key(sha256(convert_to('owner:' || p_tenant || E'\n' || p_key, 'UTF8'))) $function$
;
COMMENT ON FUNCTION idem._owner_lock_key(text,text) IS NULL;
REVOKE ALL ON FUNCTION idem._owner_lock_key(text,text) FROM PUBLIC;
