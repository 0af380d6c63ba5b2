CREATE OR REPLACE FUNCTION idem._citus_ask_each_node(p_command text, p_caller text, p_left_out text)
 RETURNS TABLE(answered boolean, result text)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_timeout text;
  v_node record;
BEGIN
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database', 'Only Citus mode calls this (docs/citus.md).');
  END IF;
  -- p_command on every node of the cluster, each over a connection of its own (outside this
  -- transaction): one node down, or shutting down mid-query, is one row answered = false and a
  -- WARNING naming it and what is left out, where a query over every shard would fail whole (at
  -- a savepoint's exit too). A node that accepts connections but does not answer would hold the
  -- caller for Citus's connection timeout (30 s by default): 5 s at most here, or the caller's
  -- own value where lower.
  v_timeout := current_setting('citus.node_connection_timeout');
  PERFORM set_config('citus.node_connection_timeout', least(s.setting::integer, 5000)::text, true)
     FROM pg_settings s WHERE s.name = 'citus.node_connection_timeout';
  FOR v_node IN SELECT r.nodeid, r.success, r.result FROM run_command_on_all_nodes(p_command) r LOOP
    IF NOT v_node.success THEN
      RAISE WARNING '%: node % (%) did not answer: %', p_caller,
        v_node.nodeid, (SELECT n.nodename || ':' || n.nodeport FROM pg_dist_node n WHERE n.nodeid = v_node.nodeid), p_left_out
        USING DETAIL = v_node.result;
    END IF;
    answered := v_node.success;
    result := CASE WHEN v_node.success THEN nullif(v_node.result, '') END;
    RETURN NEXT;
  END LOOP;
  PERFORM set_config('citus.node_connection_timeout', v_timeout, true);
END $function$
;
COMMENT ON FUNCTION idem._citus_ask_each_node(text,text,text) IS NULL;
REVOKE ALL ON FUNCTION idem._citus_ask_each_node(text,text,text) FROM PUBLIC;
