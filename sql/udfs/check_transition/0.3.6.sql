CREATE OR REPLACE FUNCTION idem.check_transition(machine text, from_state text, to_state text, row_data jsonb DEFAULT NULL::jsonb)
 RETURNS void
 LANGUAGE c
 STABLE
AS 'MODULE_PATHNAME', $function$idem_check_transition$function$
;
COMMENT ON FUNCTION idem.check_transition(text,text,text,jsonb) IS 'Raises ERR_INVALID_TRANSITION naming the machine, both states and what failed (terminal state, no such transition, the guard that does not hold).';
REVOKE ALL ON FUNCTION idem.check_transition(text,text,text,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.check_transition(text,text,text,jsonb) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.check_transition(text,text,text,jsonb) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.check_transition(text,text,text,jsonb) TO idem_operator;
