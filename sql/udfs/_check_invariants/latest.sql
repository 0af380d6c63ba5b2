CREATE OR REPLACE FUNCTION idem._check_invariants()
 RETURNS trigger
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_check_invariants$function$
;
COMMENT ON FUNCTION idem._check_invariants() IS 'Trigger of idem.keys and idem.mutations: 23514 for a row that breaks one of their invariants (once CHECK constraints of the same names).';
REVOKE ALL ON FUNCTION idem._check_invariants() FROM PUBLIC;
