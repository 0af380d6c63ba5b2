-- Idempotency keys: validation and the injective scoped-key digest (core/keys).

CREATE FUNCTION idem.validate_key(key text) RETURNS void
  AS 'MODULE_PATHNAME', 'idem_validate_key'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem.validate_key(text) IS
  'Raises ERR_IDEMPOTENCY_KEY_MISSING for NULL/empty, ERR_IDEMPOTENCY_KEY_INVALID outside printable ASCII or idem.key_min_length..idem.key_max_length.';

CREATE FUNCTION idem.scope_digest(tenant text, caller text, resource text, key text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'idem_scope_digest'
  LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idem.scope_digest(text, text, text, text) IS
  'SHA-256 of the length-prefixed (tenant, caller, resource, key): the stored identity of a record. Validates the key; NULL or empty tenant raises ERR_ARGUMENT_INVALID.';

CREATE FUNCTION idem._boundary_probe(kind text) RETURNS integer
  AS 'MODULE_PATHNAME', 'idem_raise_cpp_exception'
  LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idem._boundary_probe(text) IS
  'Test hook for the C++/PostgreSQL error boundary: throws the named kind of error (idem, std, bad_alloc, pg, int) from C++ frames that own memory.';
REVOKE ALL ON FUNCTION idem._boundary_probe(text) FROM PUBLIC;
