CREATE OR REPLACE FUNCTION idem.citus_check_table(tbl regclass)
 RETURNS TABLE(ok boolean, problem text)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_part record;
  v_col record;
  v_keys_colocation integer;
  v_problems integer := 0;
BEGIN
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database', 'docs/citus.md says how to set it up.');
  END IF;
  SELECT p.partmethod, p.colocationid, p.partkey IS NOT NULL AS has_key INTO v_part
    FROM pg_dist_partition p WHERE p.logicalrelid = tbl;
  SELECT p.colocationid INTO v_keys_colocation FROM pg_dist_partition p WHERE p.logicalrelid = 'idem.keys'::regclass;
  IF v_keys_colocation IS NULL THEN
    RETURN QUERY SELECT false, 'idem.keys is not distributed: run idem.citus_distribute() first';
    RETURN;
  END IF;
  IF v_part IS NULL THEN
    RETURN QUERY SELECT false, format('%s is not a Citus table: SELECT create_distributed_table(%L, ''<tenant column>'', colocate_with => ''idem.keys'')', tbl, tbl::text);
    RETURN;
  END IF;
  IF v_part.partmethod <> 'h' THEN
    RETURN QUERY SELECT false, format('%s is not hash-distributed (a reference or local table): its writes would not share the tenant''s node and transaction branch', tbl);
    RETURN;
  END IF;
  SELECT a.attname, a.atttypid::regtype AS type, co.collname INTO v_col
    FROM pg_attribute a LEFT JOIN pg_collation co ON co.oid = a.attcollation
   WHERE a.attrelid = tbl AND a.attname = column_to_column_name(tbl, (SELECT p.partkey FROM pg_dist_partition p WHERE p.logicalrelid = tbl));
  IF v_col.type <> 'text'::regtype OR v_col.collname IS DISTINCT FROM 'C' THEN
    RETURN QUERY SELECT false, format('%s is distributed by %I of type %s collation %s, not text COLLATE "C" as idem.keys.tenant_id', tbl, v_col.attname, v_col.type, coalesce(v_col.collname, 'none'));
    v_problems := v_problems + 1;
  END IF;
  IF v_part.colocationid <> v_keys_colocation THEN
    RETURN QUERY SELECT false, format('%s is not colocated with idem.keys: SELECT update_distributed_table_colocation(%L, colocate_with => ''idem.keys'')', tbl, tbl::text);
    v_problems := v_problems + 1;
  END IF;
  IF v_problems = 0 THEN
    RETURN QUERY SELECT true, format('%s is distributed by %I and colocated with idem.keys: a tenant''s business rows and its keys share a node and a transaction', tbl, v_col.attname);
  END IF;
END $function$
;
COMMENT ON FUNCTION idem.citus_check_table(regclass) IS 'On Citus: whether a business table is distributed by a text COLLATE "C" tenant column and colocated with idem.keys, as one-transaction idempotency needs; one row per problem, or one ok row.';
REVOKE ALL ON FUNCTION idem.citus_check_table(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.citus_check_table(regclass) TO idem_operator, idem_auditor;
