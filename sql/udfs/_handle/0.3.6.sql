CREATE OR REPLACE FUNCTION idem._handle(tenant text, scope_digest bytea)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_handle$function$
;
COMMENT ON FUNCTION idem._handle(text,bytea) IS 'The handle of the record (tenant, scope_digest).';
REVOKE ALL ON FUNCTION idem._handle(text,bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem._handle(text,bytea) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem._handle(text,bytea) TO idem_operator;
