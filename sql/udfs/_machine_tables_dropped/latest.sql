CREATE OR REPLACE FUNCTION idem._machine_tables_dropped()
 RETURNS event_trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  d record;
BEGIN
  -- On Citus, a DROP the coordinator propagates runs here with DDL propagation off: the
  -- coordinator's own trigger forgets the registration, once, for every node (machine_tables is a
  -- reference table). The dropped objects are read here, not joined into the DELETE: Citus would
  -- send the join to the nodes, where pg_event_trigger_dropped_objects() means nothing.
  IF current_setting('citus.enable_ddl_propagation', true) = 'off' THEN RETURN; END IF;
  -- Nor on a worker at all: what drops tables there is Citus (a moved shard's copy left behind,
  -- dropped by its cleanup), and the DELETE would be a distributed query inside that drop, which
  -- Citus refuses: the shard was never dropped, and every later move to that node failed.
  IF idem._citus_mode() THEN
    IF NOT citus_is_coordinator() THEN RETURN; END IF;
  END IF;
  FOR d IN SELECT o.schema_name, o.object_name FROM pg_event_trigger_dropped_objects() o WHERE o.object_type = 'table' LOOP
    DELETE FROM idem.machine_tables m WHERE m.table_schema = d.schema_name AND m.table_name = d.object_name;
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem._machine_tables_dropped() IS NULL;
REVOKE ALL ON FUNCTION idem._machine_tables_dropped() FROM PUBLIC;
