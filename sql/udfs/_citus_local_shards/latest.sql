CREATE OR REPLACE FUNCTION idem._citus_local_shards(p_tables regclass[])
 RETURNS SETOF text[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_min text;
BEGIN
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database', 'Only Citus mode calls this (docs/citus.md).');
  END IF;
  -- For each hash range placed on this node, the shard names of p_tables in their order (a
  -- reference table's one shard, which every node holds, for every range): what a query a node
  -- answers for itself reads when the coordinator cannot reach every node. Colocated shards
  -- cover one hash range, so each table's shard is found by the range's start.
  FOR v_min IN
    SELECT s.shardminvalue FROM pg_dist_shard s JOIN pg_dist_placement p ON p.shardid = s.shardid
     WHERE s.logicalrelid = 'idem.keys'::regclass
       AND p.groupid = (SELECT l.groupid FROM pg_dist_local_group l)
  LOOP
    RETURN NEXT (SELECT array_agg((SELECT shard_name(t, s.shardid) FROM pg_dist_shard s
                                    WHERE s.logicalrelid = t AND (s.shardminvalue = v_min OR s.shardminvalue IS NULL)) ORDER BY o)
                   FROM unnest(p_tables) WITH ORDINALITY u(t, o));
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem._citus_local_shards(regclass[]) IS NULL;
REVOKE ALL ON FUNCTION idem._citus_local_shards(regclass[]) FROM PUBLIC;
