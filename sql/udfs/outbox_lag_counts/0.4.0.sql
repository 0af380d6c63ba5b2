CREATE OR REPLACE FUNCTION idem.outbox_lag_counts()
 RETURNS TABLE(consumer text, topic text, backlog bigint, oldest_unacked_committed_at timestamptz,
               claimed_groups bigint, retrying_groups bigint, dead_letters bigint, nodes_not_counted integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 -- On Citus a node that accepts connections but does not answer would hold the view for Citus's
 -- connection timeout (30 s by default), twice over.
 SET citus.node_connection_timeout TO '5000'
AS $function$
DECLARE
  v_tables text[] := ARRAY['idem.outbox_subscriptions', 'idem.outbox_groups', 'idem.outbox_cursor_states',
                           'idem.outbox_commits', 'idem.outbox_events', 'idem.outbox_dead_letters'];
  v_rows jsonb := '[]';
  v_missing integer := 0;
  v_node record;
BEGIN
  -- What idem.outbox_lag shows. On Citus one node that cannot be reached fails the query over
  -- every shard, and an operator reads the lag exactly then: each node is asked for its own
  -- shards instead, the counts are added up, and the nodes that did not answer are counted
  -- (and named in a warning).
  IF NOT idem._citus_mode() THEN
    RETURN QUERY EXECUTE 'SELECT l.*, 0 FROM (' || idem._outbox_lag_query(v_tables) || ') l';
    RETURN;
  END IF;
  BEGIN
    -- Into a variable: rows already returned would stay returned were the query to fail midway.
    EXECUTE 'SELECT coalesce(jsonb_agg(l), ''[]'') FROM (' || idem._outbox_lag_query(v_tables) || ') l' INTO v_rows;
  EXCEPTION WHEN connection_exception THEN
    v_rows := '[]';
    FOR v_node IN
      SELECT r.nodeid, r.success, r.result
        FROM run_command_on_all_nodes('SELECT json_agg(l) FROM idem._outbox_lag_here() l') r
    LOOP
      IF NOT v_node.success THEN
        v_missing := v_missing + 1;
        RAISE WARNING 'idem.outbox_lag: node % (%) did not answer: its groups are not counted',
          v_node.nodeid, (SELECT n.nodename || ':' || n.nodeport FROM pg_dist_node n WHERE n.nodeid = v_node.nodeid)
          USING DETAIL = v_node.result;
      ELSIF v_node.result IS NOT NULL AND v_node.result <> '' THEN
        v_rows := v_rows || v_node.result::jsonb;
      END IF;
    END LOOP;
  END;
  RETURN QUERY
    SELECT x.consumer, x.topic, sum(x.backlog)::bigint, min(x.oldest_unacked_committed_at),
           sum(x.claimed_groups)::bigint, sum(x.retrying_groups)::bigint, sum(x.dead_letters)::bigint, v_missing
      FROM jsonb_to_recordset(v_rows) AS x(consumer text, topic text, backlog bigint, oldest_unacked_committed_at timestamptz,
                                           claimed_groups bigint, retrying_groups bigint, dead_letters bigint)
     GROUP BY x.consumer, x.topic;
END $function$
;
COMMENT ON FUNCTION idem.outbox_lag_counts() IS 'The rows of idem.outbox_lag before its defaults: per consumer and topic the backlog, the oldest unacked commit, the groups claimed and retrying, the open dead letters (NULL where none), and on Citus the nodes that did not answer (their groups not counted).';
REVOKE ALL ON FUNCTION idem.outbox_lag_counts() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.outbox_lag_counts() TO idem_service, idem_consumer, idem_auditor, idem_operator;
