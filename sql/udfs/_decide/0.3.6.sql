CREATE OR REPLACE FUNCTION idem._decide(status text, history boolean, lease_live boolean, own_transaction boolean, has_checkpoint boolean, same_payload boolean, payload_pinned boolean)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_decide$function$
;
COMMENT ON FUNCTION idem._decide(text,boolean,boolean,boolean,boolean,boolean,boolean) IS 'The acquisition table (core/protocol/decision.cpp): what acquire does with a key, given what its record says.';
REVOKE ALL ON FUNCTION idem._decide(text,boolean,boolean,boolean,boolean,boolean,boolean) FROM PUBLIC;
