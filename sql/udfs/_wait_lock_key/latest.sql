CREATE OR REPLACE FUNCTION idem._wait_lock_key(lock_key bigint)
 RETURNS void
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_wait_lock_key$function$
;
COMMENT ON FUNCTION idem._wait_lock_key(bigint) IS 'Takes the key''s transaction-level lock, waiting (lock_timeout and deadlock detection apply).';
REVOKE ALL ON FUNCTION idem._wait_lock_key(bigint) FROM PUBLIC;
