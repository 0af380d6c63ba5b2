-- Fingerprints: RFC 8785 canonical JSON and SHA-256 payload hashes (core/json, core/fingerprint).

CREATE FUNCTION idem.canonical_json(payload text) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_canonical_json_text'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.canonical_json(text) IS
  'RFC 8785 canonical form of JSON text, parsed strictly (duplicate keys, bad UTF-8, comments, trailing commas refused with ERR_PAYLOAD_JSON_INVALID).';

CREATE FUNCTION idem.canonical_json(payload jsonb) RETURNS text
  AS 'MODULE_PATHNAME', 'idem_canonical_json_jsonb'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.canonical_json(jsonb) IS
  'RFC 8785 canonical form of a jsonb value (jsonb has already dropped duplicate keys and number spelling).';

CREATE FUNCTION idem.payload_hash(payload jsonb, exclude text[] DEFAULT '{}') RETURNS bytea
  AS 'MODULE_PATHNAME', 'idem_payload_hash_jsonb'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.payload_hash(jsonb, text[]) IS
  'SHA-256 (32 bytes) of the RFC 8785 form of payload minus the RFC 6901 pointers in exclude; scheme idem.fingerprint_scheme(). Numbers a double cannot hold exactly raise ERR_PAYLOAD_NUMBER_PRECISION.';

CREATE FUNCTION idem.payload_hash(payload text, exclude text[] DEFAULT '{}') RETURNS bytea
  AS 'MODULE_PATHNAME', 'idem_payload_hash_text'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idem.payload_hash(text, text[]) IS
  'payload_hash of JSON text parsed with the strict parser (duplicate keys refused rather than silently merged).';

CREATE FUNCTION idem.fingerprint_scheme() RETURNS integer
  AS 'MODULE_PATHNAME', 'idem_fingerprint_scheme'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem.fingerprint_scheme() IS
  'The fingerprint scheme payload_hash implements and every record stores (1 = RFC 8785 + SHA-256, exact numbers only).';

-- The hash together with the scheme that produced it, as a record stores them.
CREATE FUNCTION idem.fingerprint(payload jsonb, exclude text[] DEFAULT '{}', OUT hash bytea, OUT scheme integer)
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN (idem.payload_hash(payload, exclude), idem.fingerprint_scheme());
COMMENT ON FUNCTION idem.fingerprint(jsonb, text[]) IS
  'payload_hash with its scheme number: (hash bytea, scheme integer).';

CREATE FUNCTION idem.fingerprint(payload text, exclude text[] DEFAULT '{}', OUT hash bytea, OUT scheme integer)
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN (idem.payload_hash(payload, exclude), idem.fingerprint_scheme());
COMMENT ON FUNCTION idem.fingerprint(text, text[]) IS
  'payload_hash of JSON text (strict parser) with its scheme number: (hash bytea, scheme integer).';
