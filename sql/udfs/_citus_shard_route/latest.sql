CREATE OR REPLACE FUNCTION idem._citus_shard_route(p_tenant text,
  OUT keys_shard text, OUT keys_pkey_shard text, OUT retired_keys_shard text, OUT mutations_shard text,
  OUT keys_oid oid, OUT keys_pkey_oid oid,
  OUT colocation_id integer, OUT shard_index integer, OUT is_local boolean, OUT placements integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE STRICT
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_keys bigint;
BEGIN
  -- Where the C fast path finds the tenant's rows on this node (extension/citus/shard_route.cpp):
  -- the shards of idem.keys (and its primary key), idem.retired_keys and idem.mutations that hold
  -- the tenant, schema-qualified; and the colocation id and shard index that name the lock
  -- Citus's executor takes before it writes a shard, which a shard move takes exclusively.
  -- is_local: the placement of the tenant's shard is this node's (a moved shard's old table may
  -- linger until Citus's cleanup drops it: its name alone proves nothing). The caller reads this
  -- under the latest snapshot, not a REPEATABLE READ transaction's (shard_route.cpp).
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database', 'Only Citus mode calls this (docs/citus.md).');
  END IF;
  v_keys := get_shard_id_for_distribution_column('idem.keys', p_tenant);
  keys_shard := shard_name('idem.keys', v_keys);
  keys_pkey_shard := 'idem.' || quote_ident('keys_pkey_' || v_keys);
  retired_keys_shard := shard_name('idem.retired_keys', get_shard_id_for_distribution_column('idem.retired_keys', p_tenant));
  mutations_shard := shard_name('idem.mutations', get_shard_id_for_distribution_column('idem.mutations', p_tenant));
  keys_oid := to_regclass(keys_shard);
  keys_pkey_oid := to_regclass(keys_pkey_shard);
  SELECT p.colocationid INTO colocation_id FROM pg_dist_partition p WHERE p.logicalrelid = 'idem.keys'::regclass;
  -- Citus's shard index: the shard's position among the table's shards by their hash ranges.
  SELECT count(*)::integer INTO shard_index
    FROM pg_dist_shard o, pg_dist_shard s
   WHERE s.shardid = v_keys AND o.logicalrelid = 'idem.keys'::regclass
     AND o.shardminvalue::integer < s.shardminvalue::integer;
  is_local := keys_oid IS NOT NULL AND keys_pkey_oid IS NOT NULL
    AND EXISTS (SELECT FROM pg_dist_placement pl
                 WHERE pl.shardid = v_keys AND pl.groupid = (SELECT l.groupid FROM pg_dist_local_group l));
  -- More than one: a replica elsewhere, which a write of the shard as a plain table would miss.
  SELECT count(*)::integer INTO placements FROM pg_dist_placement pl WHERE pl.shardid = v_keys;
END $function$
;
COMMENT ON FUNCTION idem._citus_shard_route(text) IS NULL;
REVOKE ALL ON FUNCTION idem._citus_shard_route(text) FROM PUBLIC;
