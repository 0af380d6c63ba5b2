CREATE OR REPLACE FUNCTION idem._log_triggers(tbl regclass, status_column text)
 RETURNS TABLE(trigger_name name, cloned boolean)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT t.tgname, t.tgparentid <> 0 FROM pg_trigger t
   WHERE t.tgrelid = tbl AND t.tgfoid = 'idem._log_transitions()'::regprocedure AND t.tgnargs = 1
     AND convert_from(split_part(encode(t.tgargs, 'escape'), '\000', 1)::bytea, 'UTF8') = status_column $function$
;
COMMENT ON FUNCTION idem._log_triggers(regclass,text) IS NULL;
REVOKE ALL ON FUNCTION idem._log_triggers(regclass,text) FROM PUBLIC;
