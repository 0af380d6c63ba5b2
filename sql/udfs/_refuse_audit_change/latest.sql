CREATE OR REPLACE FUNCTION idem._refuse_audit_change()
 RETURNS trigger
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_refuse_audit_change$function$
;
COMMENT ON FUNCTION idem._refuse_audit_change() IS 'Trigger of idem.mutations and idem.transition_log: ERR_AUDIT_APPEND_ONLY for UPDATE, TRUNCATE and any DELETE but idem.purge_audit''s.';
REVOKE ALL ON FUNCTION idem._refuse_audit_change() FROM PUBLIC;
