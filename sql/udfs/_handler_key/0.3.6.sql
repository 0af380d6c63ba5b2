CREATE OR REPLACE FUNCTION idem._handler_key(scope_digest bytea, generation integer)
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_handler_key$function$
;
COMMENT ON FUNCTION idem._handler_key(bytea,integer) IS NULL;
REVOKE ALL ON FUNCTION idem._handler_key(bytea,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem._handler_key(bytea,integer) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem._handler_key(bytea,integer) TO idem_operator;
