CREATE OR REPLACE FUNCTION idem.guard_before_capture(row_data jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN ((NOT (row_data ? 'captured'::text)) OR ((row_data -> 'captured'::text) = 'false'::jsonb))
;
COMMENT ON FUNCTION idem.guard_before_capture(jsonb) IS 'Guard "before payment capture" of order created -> cancelled: false when the row says captured = true.';
REVOKE ALL ON FUNCTION idem.guard_before_capture(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.guard_before_capture(jsonb) TO idem_service;
