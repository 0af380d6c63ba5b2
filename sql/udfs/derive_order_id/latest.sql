CREATE OR REPLACE FUNCTION idem.derive_order_id(tenant text, key text, generation integer, at timestamp with time zone DEFAULT clock_timestamp())
 RETURNS text
 LANGUAGE c
 IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_derive_order_id$function$
;
COMMENT ON FUNCTION idem.derive_order_id(text,text,integer,timestamp with time zone) IS 'The reference §2.2 order id: 8 hex digits of the Unix seconds of at + the first 64 bits of SHA-256 over (tenant, key, generation); 24 characters, sortable by time.';
REVOKE ALL ON FUNCTION idem.derive_order_id(text,text,integer,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.derive_order_id(text,text,integer,timestamp with time zone) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.derive_order_id(text,text,integer,timestamp with time zone) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.derive_order_id(text,text,integer,timestamp with time zone) TO idem_operator;
