CREATE OR REPLACE FUNCTION idem._log_transitions()
 RETURNS trigger
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_log_transitions$function$
;
COMMENT ON FUNCTION idem._log_transitions() IS 'AFTER row trigger created by idem.register_machine_table: logs each transition of a registered table once the row is written.';
REVOKE ALL ON FUNCTION idem._log_transitions() FROM PUBLIC;
