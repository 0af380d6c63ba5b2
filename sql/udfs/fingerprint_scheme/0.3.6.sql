CREATE OR REPLACE FUNCTION idem.fingerprint_scheme()
 RETURNS integer
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_fingerprint_scheme$function$
;
COMMENT ON FUNCTION idem.fingerprint_scheme() IS 'The fingerprint scheme payload_hash implements and every record stores (1 = RFC 8785 + SHA-256, exact numbers only).';
REVOKE ALL ON FUNCTION idem.fingerprint_scheme() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.fingerprint_scheme() TO idem_service;
GRANT EXECUTE ON FUNCTION idem.fingerprint_scheme() TO idem_auditor;
