CREATE OR REPLACE FUNCTION idem._retry_after()
 RETURNS integer
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_retry_after$function$
;
COMMENT ON FUNCTION idem._retry_after() IS 'idem.retry_after in seconds, the Retry-After of in_progress.';
REVOKE ALL ON FUNCTION idem._retry_after() FROM PUBLIC;
