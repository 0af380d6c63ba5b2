CREATE OR REPLACE FUNCTION idem._elapsed(value interval)
 RETURNS interval
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_elapsed$function$
;
COMMENT ON FUNCTION idem._elapsed(interval) IS 'The interval as elapsed time (a day is 24 hours, a month 30 days); ERR_ARGUMENT_INVALID unless positive.';
REVOKE ALL ON FUNCTION idem._elapsed(interval) FROM PUBLIC;
