CREATE OR REPLACE FUNCTION idem._drop_log_triggers(tbl regclass, status_column text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_name name;
BEGIN
  FOR v_name IN SELECT l.trigger_name FROM idem._log_triggers(tbl, status_column) l WHERE NOT l.cloned LOOP
    EXECUTE format('DROP TRIGGER %I ON %s', v_name, tbl);
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem._drop_log_triggers(regclass,text) IS NULL;
REVOKE ALL ON FUNCTION idem._drop_log_triggers(regclass,text) FROM PUBLIC;
