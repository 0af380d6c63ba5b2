CREATE OR REPLACE FUNCTION idem._min_audit_retention()
 RETURNS interval
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_min_audit_retention$function$
;
COMMENT ON FUNCTION idem._min_audit_retention() IS 'idem.min_audit_retention as an interval.';
REVOKE ALL ON FUNCTION idem._min_audit_retention() FROM PUBLIC;
