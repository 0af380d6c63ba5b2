CREATE OR REPLACE FUNCTION idem.can_transition(machine text, from_state text, to_state text, row_data jsonb DEFAULT NULL::jsonb)
 RETURNS boolean
 LANGUAGE c
 STABLE
AS 'MODULE_PATHNAME', $function$idem_can_transition$function$
;
COMMENT ON FUNCTION idem.can_transition(text,text,text,jsonb) IS 'Whether machine may move from_state -> to_state (its guard asked only when row_data is given); ERR_MACHINE_UNKNOWN / ERR_STATE_UNKNOWN for names it does not have.';
REVOKE ALL ON FUNCTION idem.can_transition(text,text,text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.can_transition(text,text,text,jsonb) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.can_transition(text,text,text,jsonb) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.can_transition(text,text,text,jsonb) TO idem_operator;
