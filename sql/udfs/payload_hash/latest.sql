CREATE OR REPLACE FUNCTION idem.payload_hash(payload jsonb, exclude text[] DEFAULT '{}'::text[])
 RETURNS bytea
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_payload_hash_jsonb$function$
;
COMMENT ON FUNCTION idem.payload_hash(jsonb,text[]) IS 'SHA-256 (32 bytes) of the RFC 8785 form of payload minus the RFC 6901 pointers in exclude; scheme idem.fingerprint_scheme(). Numbers a double cannot hold exactly raise ERR_PAYLOAD_NUMBER_PRECISION.';
REVOKE ALL ON FUNCTION idem.payload_hash(jsonb,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.payload_hash(jsonb,text[]) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.payload_hash(jsonb,text[]) TO idem_auditor;

CREATE OR REPLACE FUNCTION idem.payload_hash(payload text, exclude text[] DEFAULT '{}'::text[])
 RETURNS bytea
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_payload_hash_text$function$
;
COMMENT ON FUNCTION idem.payload_hash(text,text[]) IS 'payload_hash of JSON text parsed with the strict parser (duplicate keys refused rather than silently merged).';
REVOKE ALL ON FUNCTION idem.payload_hash(text,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.payload_hash(text,text[]) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.payload_hash(text,text[]) TO idem_auditor;
