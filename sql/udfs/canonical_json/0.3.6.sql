CREATE OR REPLACE FUNCTION idem.canonical_json(payload jsonb)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_canonical_json_jsonb$function$
;
COMMENT ON FUNCTION idem.canonical_json(jsonb) IS 'RFC 8785 canonical form of a jsonb value (jsonb has already dropped duplicate keys and number spelling).';
REVOKE ALL ON FUNCTION idem.canonical_json(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.canonical_json(jsonb) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.canonical_json(jsonb) TO idem_auditor;

CREATE OR REPLACE FUNCTION idem.canonical_json(payload text)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_canonical_json_text$function$
;
COMMENT ON FUNCTION idem.canonical_json(text) IS 'RFC 8785 canonical form of JSON text, parsed strictly (duplicate keys, bad UTF-8, comments, trailing commas refused with ERR_PAYLOAD_JSON_INVALID).';
REVOKE ALL ON FUNCTION idem.canonical_json(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.canonical_json(text) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.canonical_json(text) TO idem_auditor;
