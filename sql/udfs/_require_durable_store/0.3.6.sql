CREATE OR REPLACE FUNCTION idem._require_durable_store()
 RETURNS void
 LANGUAGE c
 STABLE
AS 'MODULE_PATHNAME', $function$idem_require_durable_store$function$
;
COMMENT ON FUNCTION idem._require_durable_store() IS 'Raises ERR_NON_ATOMIC_IDEMPOTENCY_STORE when fsync or synchronous_commit is off or idem.keys is unlogged (unless idem.allow_non_atomic_store).';
REVOKE ALL ON FUNCTION idem._require_durable_store() FROM PUBLIC;
