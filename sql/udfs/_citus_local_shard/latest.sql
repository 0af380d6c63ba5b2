CREATE OR REPLACE FUNCTION idem._citus_local_shard(p_table regclass, p_tenant text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_shard text;
  v_id    bigint;
BEGIN
  -- The shard of p_table that holds the tenant, schema-qualified and quoted, when it is on this
  -- node. Called on Citus; anywhere else it says so.
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database', 'Only Citus mode calls this (docs/citus.md).');
  END IF;
  v_id := get_shard_id_for_distribution_column(p_table, p_tenant);
  v_shard := shard_name(p_table, v_id);
  -- Placed here, not only present: a moved shard's table lingers until Citus's cleanup drops it.
  IF to_regclass(v_shard) IS NULL
     OR NOT EXISTS (SELECT FROM pg_dist_placement pl
                     WHERE pl.shardid = v_id AND pl.groupid = (SELECT l.groupid FROM pg_dist_local_group l)) THEN
    PERFORM idem._raise('ERR_TENANT_NOT_LOCAL',
      format('the shard of tenant %s is not on this node', quote_literal(p_tenant)),
      'Call through the coordinator, with the tenant first (docs/citus.md).');
  END IF;
  RETURN v_shard;
END $function$
;
COMMENT ON FUNCTION idem._citus_local_shard(regclass,text) IS NULL;
REVOKE ALL ON FUNCTION idem._citus_local_shard(regclass,text) FROM PUBLIC;
