CREATE OR REPLACE FUNCTION idem._machine_tables_dropped()
 RETURNS event_trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  DELETE FROM idem.machine_tables m
   USING pg_event_trigger_dropped_objects() d
   WHERE d.object_type = 'table' AND m.table_schema = d.schema_name AND m.table_name = d.object_name;
END $function$
;
COMMENT ON FUNCTION idem._machine_tables_dropped() IS NULL;
REVOKE ALL ON FUNCTION idem._machine_tables_dropped() FROM PUBLIC;
