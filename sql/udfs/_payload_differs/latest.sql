CREATE OR REPLACE FUNCTION idem._payload_differs(stored bytea, sent bytea)
 RETURNS text[]
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE STRICT
AS 'MODULE_PATHNAME', $function$idem_payload_differs$function$
;
COMMENT ON FUNCTION idem._payload_differs(bytea,bytea) IS NULL;
REVOKE ALL ON FUNCTION idem._payload_differs(bytea,bytea) FROM PUBLIC;
