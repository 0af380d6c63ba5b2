CREATE OR REPLACE FUNCTION idem._consumer_bindings_exist()
 RETURNS boolean
 LANGUAGE c
 STABLE
AS 'MODULE_PATHNAME', $function$idem_consumer_bindings_exist$function$
;
COMMENT ON FUNCTION idem._consumer_bindings_exist() IS 'Whether idem.consumer_bindings holds any row (cached per backend, read under the latest snapshot, forgotten when the table changes).';
REVOKE ALL ON FUNCTION idem._consumer_bindings_exist() FROM PUBLIC;
