CREATE OR REPLACE FUNCTION idem._key_locked_by_me(lock_key bigint)
 RETURNS boolean
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_key_locked_by_me$function$
;
COMMENT ON FUNCTION idem._key_locked_by_me(bigint) IS 'Whether this transaction holds the key''s lock (locks are re-entrant: a second take would succeed).';
REVOKE ALL ON FUNCTION idem._key_locked_by_me(bigint) FROM PUBLIC;
