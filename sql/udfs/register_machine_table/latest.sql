CREATE OR REPLACE FUNCTION idem.register_machine_table(tbl regclass, machine text, status_column text, key_column text, tenant_column text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_schema text;
  v_table  text;
  v_kind   "char";
  v_persistence "char";
  v_column text;
  v_what   text;
BEGIN
  PERFORM idem._require_unbound('register a table for idem.enforce_transitions');
  IF tbl IS NULL OR machine IS NULL OR status_column IS NULL OR tenant_column IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'register_machine_table: only key_column may be NULL',
      'For example: SELECT idem.register_machine_table(''public.orders'', ''order'', ''status'', ''order_id'', ''tenant_id'').');
  END IF;
  SELECT n.nspname, c.relname, c.relkind, c.relpersistence INTO v_schema, v_table, v_kind, v_persistence
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tbl;
  -- Registering creates a trigger on the table: never on ours or the system's.
  IF v_schema IN ('idem', 'pg_catalog', 'information_schema', 'pg_toast') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('register_machine_table: %s is in schema %s, whose tables are not guarded', tbl::text, v_schema),
      'Register an application table.');
  END IF;
  IF v_kind NOT IN ('r', 'p') OR v_persistence <> 'p' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('register_machine_table: %s is not a permanent table', tbl::text),
      'Register the table the trigger guards (not a view, a temporary or an unlogged table).');
  END IF;
  IF NOT EXISTS (SELECT 1 FROM idem.machine_states s WHERE s.machine = register_machine_table.machine) THEN
    PERFORM idem._raise('ERR_MACHINE_UNKNOWN', format('no state machine named %L', machine),
      'Define its states in idem.machine_states first.');
  END IF;
  FOR v_what, v_column IN VALUES ('status', status_column), ('key', key_column), ('tenant', tenant_column) LOOP
    CONTINUE WHEN v_column IS NULL;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = tbl AND a.attname = v_column
                      AND a.attnum > 0 AND NOT a.attisdropped
                      AND (v_what <> 'status' OR a.attgenerated = '')
                      AND (v_what <> 'tenant' OR a.atttypid IN ('text'::regtype, 'varchar'::regtype))) THEN
      PERFORM idem._raise('ERR_ARGUMENT_INVALID',
        format('register_machine_table: %s has no %s column %I%s', tbl::text, v_what, v_column,
               CASE v_what WHEN 'status' THEN ' (that is not generated)' WHEN 'tenant' THEN ' of type text' ELSE '' END));
    END IF;
  END LOOP;
  INSERT INTO idem.machine_tables AS m (table_schema, table_name, machine, status_column, key_column, tenant_column,
                                        registered_by, registered_at)
  VALUES (v_schema, v_table, machine, status_column, key_column, tenant_column, session_user, clock_timestamp())
  ON CONFLICT ON CONSTRAINT machine_tables_pkey DO UPDATE
    SET machine = EXCLUDED.machine, key_column = EXCLUDED.key_column,
        tenant_column = EXCLUDED.tenant_column, registered_by = EXCLUDED.registered_by,
        registered_at = EXCLUDED.registered_at;
  PERFORM idem._create_log_trigger(tbl, status_column);
END $function$
;
COMMENT ON FUNCTION idem.register_machine_table(regclass,text,text,text,text) IS 'Operator: let idem.enforce_transitions guard tbl''s status_column with machine, logging key_column as the row key and tenant_column as its tenant.';
REVOKE ALL ON FUNCTION idem.register_machine_table(regclass,text,text,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.register_machine_table(regclass,text,text,text,text) TO idem_operator;
