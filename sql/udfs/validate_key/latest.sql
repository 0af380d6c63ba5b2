CREATE OR REPLACE FUNCTION idem.validate_key(key text)
 RETURNS void
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_validate_key$function$
;
COMMENT ON FUNCTION idem.validate_key(text) IS 'Raises ERR_IDEMPOTENCY_KEY_MISSING for NULL/empty, ERR_IDEMPOTENCY_KEY_INVALID outside printable ASCII or idem.key_min_length..idem.key_max_length.';
REVOKE ALL ON FUNCTION idem.validate_key(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.validate_key(text) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.validate_key(text) TO idem_auditor;
