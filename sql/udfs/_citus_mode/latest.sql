CREATE OR REPLACE FUNCTION idem._citus_mode()
 RETURNS boolean
 LANGUAGE c
 STABLE
AS 'MODULE_PATHNAME', $function$idem_citus_mode$function$
;
COMMENT ON FUNCTION idem._citus_mode() IS 'Whether idem.keys is a Citus table in this database (idem.citus_distribute() ran).';
REVOKE ALL ON FUNCTION idem._citus_mode() FROM PUBLIC;
