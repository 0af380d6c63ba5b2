CREATE OR REPLACE FUNCTION idem.fingerprint(payload jsonb, exclude text[] DEFAULT '{}'::text[], OUT hash bytea, OUT scheme integer)
 RETURNS record
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN ROW(idem.payload_hash(payload, exclude), idem.fingerprint_scheme())
;
COMMENT ON FUNCTION idem.fingerprint(jsonb,text[]) IS 'payload_hash with its scheme number: (hash bytea, scheme integer).';
REVOKE ALL ON FUNCTION idem.fingerprint(jsonb,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.fingerprint(jsonb,text[]) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.fingerprint(jsonb,text[]) TO idem_auditor;

CREATE OR REPLACE FUNCTION idem.fingerprint(payload text, exclude text[] DEFAULT '{}'::text[], OUT hash bytea, OUT scheme integer)
 RETURNS record
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN ROW(idem.payload_hash(payload, exclude), idem.fingerprint_scheme())
;
COMMENT ON FUNCTION idem.fingerprint(text,text[]) IS 'payload_hash of JSON text (strict parser) with its scheme number: (hash bytea, scheme integer).';
REVOKE ALL ON FUNCTION idem.fingerprint(text,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.fingerprint(text,text[]) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.fingerprint(text,text[]) TO idem_auditor;
