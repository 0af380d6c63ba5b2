CREATE OR REPLACE FUNCTION idem.enforce_transitions()
 RETURNS trigger
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_enforce_transitions$function$
;
COMMENT ON FUNCTION idem.enforce_transitions() IS 'Row trigger (BEFORE INSERT OR UPDATE) with arguments (machine, status column [, key column [, ''raise'' | ''skip'']]): the column follows the machine; every transition is logged in idem.transition_log.';
REVOKE ALL ON FUNCTION idem.enforce_transitions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.enforce_transitions() TO idem_service;
