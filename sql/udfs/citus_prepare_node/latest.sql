CREATE OR REPLACE FUNCTION idem.citus_prepare_node()
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  s regclass;
  v_group bigint;
  v_low bigint;
  v_last bigint;
BEGIN
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database',
      'idem.citus_prepare_node() runs on the nodes of a Citus cluster (docs/citus.md).');
  END IF;
  -- Every node counts in its own range, as Citus gives a distributed table's bigserial: the node
  -- group id in the top 16 bits. Ids stay unique across nodes and across shard moves (not ordered
  -- across nodes). Idempotent: a sequence already in its range is left where it is.
  SELECT l.groupid INTO v_group FROM pg_dist_local_group l;
  -- This node's sequences only: Citus would refuse to alter a sequence its tables use, for every node.
  PERFORM set_config('citus.enable_ddl_propagation', 'off', true);
  v_low := (v_group << 48) + 1;
  FOR s IN SELECT c.oid::regclass FROM pg_class c WHERE c.relnamespace = 'idem'::regnamespace AND c.relkind = 'S' LOOP
    EXECUTE format('SELECT coalesce(last_value, 0) FROM %s', s) INTO v_last;  -- NULL: never used
    IF v_last < v_low THEN
      EXECUTE format('ALTER SEQUENCE %s MINVALUE %s MAXVALUE %s START WITH %s RESTART WITH %s',
                     s, v_low, v_low + (1::bigint << 48) - 2, v_low, v_low);
    END IF;
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem.citus_prepare_node() IS 'On each node of a Citus cluster (superuser; citus_distribute calls it on every node, run it again on a node added later): give this node''s idem sequences their own range.';
REVOKE ALL ON FUNCTION idem.citus_prepare_node() FROM PUBLIC;
