CREATE OR REPLACE FUNCTION idem._retired_generation_now(tenant text, scope_digest bytea)
 RETURNS integer
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_retired_generation_now$function$
;
COMMENT ON FUNCTION idem._retired_generation_now(text,bytea) IS 'The generation idem.retired_keys holds for the key in the latest committed state (not the caller''s snapshot); 0 when none.';
REVOKE ALL ON FUNCTION idem._retired_generation_now(text,bytea) FROM PUBLIC;
