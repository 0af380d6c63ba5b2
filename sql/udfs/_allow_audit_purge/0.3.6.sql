CREATE OR REPLACE FUNCTION idem._allow_audit_purge(allowed boolean)
 RETURNS void
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_allow_audit_purge$function$
;
COMMENT ON FUNCTION idem._allow_audit_purge(boolean) IS 'Lets idem.purge_audit delete audit rows while it runs (cleared when it returns, and by any abort).';
REVOKE ALL ON FUNCTION idem._allow_audit_purge(boolean) FROM PUBLIC;
