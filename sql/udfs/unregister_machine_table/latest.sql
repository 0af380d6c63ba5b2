CREATE OR REPLACE FUNCTION idem.unregister_machine_table(table_schema text, table_name text, status_column text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_removed integer := 0;
  v_table   regclass := to_regclass(format('%I.%I', table_schema, table_name));
  v_column  text;
BEGIN
  PERFORM idem._require_unbound('unregister a table from idem.enforce_transitions');
  FOR v_column IN
    DELETE FROM idem.machine_tables m
     WHERE m.table_schema = unregister_machine_table.table_schema AND m.table_name = unregister_machine_table.table_name
       AND (unregister_machine_table.status_column IS NULL OR m.status_column = unregister_machine_table.status_column)
    RETURNING m.status_column
  LOOP
    v_removed := v_removed + 1;
    IF v_table IS NOT NULL THEN
      PERFORM idem._drop_log_triggers(v_table, v_column);
    END IF;
  END LOOP;
  RETURN v_removed;
END $function$
;
COMMENT ON FUNCTION idem.unregister_machine_table(text,text,text) IS 'Operator: removes the table''s registrations (one status column''s, or all); its guard then refuses every write (ERR_MACHINE_TABLE_UNREGISTERED). Returns how many were removed.';
REVOKE ALL ON FUNCTION idem.unregister_machine_table(text,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.unregister_machine_table(text,text,text) TO idem_operator;
