CREATE OR REPLACE FUNCTION idem._unlock_key(lock_key bigint)
 RETURNS boolean
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_unlock_key$function$
;
COMMENT ON FUNCTION idem._unlock_key(bigint) IS 'Gives back one hold of the key''s lock taken by the current resource owner: a refused acquire holds nothing.';
REVOKE ALL ON FUNCTION idem._unlock_key(bigint) FROM PUBLIC;
