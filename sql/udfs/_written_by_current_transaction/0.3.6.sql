CREATE OR REPLACE FUNCTION idem._written_by_current_transaction(row_xmin xid)
 RETURNS boolean
 LANGUAGE c
 STABLE STRICT
AS 'MODULE_PATHNAME', $function$idem_written_by_current_transaction$function$
;
COMMENT ON FUNCTION idem._written_by_current_transaction(xid) IS 'True when a row version with this xmin was written by the current transaction or one of its subtransactions.';
REVOKE ALL ON FUNCTION idem._written_by_current_transaction(xid) FROM PUBLIC;
