CREATE OR REPLACE FUNCTION idem._create_log_trigger(tbl regclass, status_column text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM idem._log_triggers(tbl, status_column)) THEN RETURN; END IF;
  -- A partition's own log trigger would clash with the clone of this one: the clone replaces it.
  PERFORM idem._drop_log_triggers(p.relid, status_column)
     FROM pg_partition_tree(tbl) p WHERE p.relid <> tbl AND p.isleaf IS NOT NULL;
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION idem._log_transitions(%L)',
                 idem._log_trigger_name(status_column), tbl, status_column);
END $function$
;
COMMENT ON FUNCTION idem._create_log_trigger(regclass,text) IS NULL;
REVOKE ALL ON FUNCTION idem._create_log_trigger(regclass,text) FROM PUBLIC;
