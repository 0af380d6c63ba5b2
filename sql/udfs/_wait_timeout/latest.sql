CREATE OR REPLACE FUNCTION idem._wait_timeout()
 RETURNS interval
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_wait_timeout$function$
;
COMMENT ON FUNCTION idem._wait_timeout() IS 'idem.wait_timeout: the longest acquire(on_busy => ''wait'') polls.';
REVOKE ALL ON FUNCTION idem._wait_timeout() FROM PUBLIC;
