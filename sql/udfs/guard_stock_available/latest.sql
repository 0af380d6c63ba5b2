CREATE OR REPLACE FUNCTION idem.guard_stock_available(row_data jsonb)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN ((NOT (row_data ? 'stock_available'::text)) OR ((row_data -> 'stock_available'::text) = 'true'::jsonb))
;
COMMENT ON FUNCTION idem.guard_stock_available(jsonb) IS 'Guard "stock available" of order created -> confirmed: false when the row says stock_available = false.';
REVOKE ALL ON FUNCTION idem.guard_stock_available(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.guard_stock_available(jsonb) TO idem_service;
