CREATE OR REPLACE FUNCTION idem._try_lock_key(lock_key bigint)
 RETURNS boolean
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_try_lock_key$function$
;
COMMENT ON FUNCTION idem._try_lock_key(bigint) IS 'Takes the key''s transaction-level lock if it is free, never waiting (advisory tag space 3, out of reach of pg_advisory_*).';
REVOKE ALL ON FUNCTION idem._try_lock_key(bigint) FROM PUBLIC;
