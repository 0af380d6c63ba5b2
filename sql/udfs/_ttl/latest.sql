CREATE OR REPLACE FUNCTION idem._ttl(ttl interval)
 RETURNS interval
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_ttl$function$
;
COMMENT ON FUNCTION idem._ttl(interval) IS 'The TTL as elapsed time (NULL: idem.default_ttl); ERR_ARGUMENT_INVALID unless positive and at most idem.max_ttl.';
REVOKE ALL ON FUNCTION idem._ttl(interval) FROM PUBLIC;
