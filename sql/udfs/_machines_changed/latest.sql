CREATE OR REPLACE FUNCTION idem._machines_changed()
 RETURNS trigger
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_machines_changed$function$
;
COMMENT ON FUNCTION idem._machines_changed() IS 'Statement trigger of the machine tables: every backend drops its cached state machines.';
REVOKE ALL ON FUNCTION idem._machines_changed() FROM PUBLIC;
