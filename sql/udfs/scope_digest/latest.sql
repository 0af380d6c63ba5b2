CREATE OR REPLACE FUNCTION idem.scope_digest(tenant text, caller text, resource text, key text)
 RETURNS bytea
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_scope_digest$function$
;
COMMENT ON FUNCTION idem.scope_digest(text,text,text,text) IS 'SHA-256 of the length-prefixed (tenant, caller, resource, key): the stored identity of a record. Validates the key; NULL or empty tenant raises ERR_ARGUMENT_INVALID.';
REVOKE ALL ON FUNCTION idem.scope_digest(text,text,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.scope_digest(text,text,text,text) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.scope_digest(text,text,text,text) TO idem_auditor;
