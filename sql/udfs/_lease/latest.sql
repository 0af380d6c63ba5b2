CREATE OR REPLACE FUNCTION idem._lease(lease interval)
 RETURNS interval
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_lease$function$
;
COMMENT ON FUNCTION idem._lease(interval) IS 'The lease as elapsed time (NULL: idem.lease_timeout); ERR_ARGUMENT_INVALID unless positive and at most idem.max_lease.';
REVOKE ALL ON FUNCTION idem._lease(interval) FROM PUBLIC;
