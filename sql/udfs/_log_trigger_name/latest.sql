CREATE OR REPLACE FUNCTION idem._log_trigger_name(status_column text)
 RETURNS name
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT CASE WHEN octet_length('_idem_log_' || status_column) <= 63 THEN '_idem_log_' || status_column
              ELSE '_idem_log_' || md5(status_column) END::name $function$
;
COMMENT ON FUNCTION idem._log_trigger_name(text) IS NULL;
REVOKE ALL ON FUNCTION idem._log_trigger_name(text) FROM PUBLIC;
