CREATE OR REPLACE FUNCTION idem._lock_key(scope_digest bytea)
 RETURNS bigint
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_lock_key$function$
;
COMMENT ON FUNCTION idem._lock_key(bytea) IS 'Transaction advisory-lock key of a scoped key: the first 8 bytes of its digest.';
REVOKE ALL ON FUNCTION idem._lock_key(bytea) FROM PUBLIC;
