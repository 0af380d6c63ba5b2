CREATE OR REPLACE FUNCTION idem.outbox_backlog(consumer text, topics text[] DEFAULT NULL::text[])
 RETURNS TABLE(tenant_id text, topic text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 -- On Citus a node that accepts connections but does not answer would hold every poll for
 -- Citus's connection timeout (30 s by default), twice over.
 SET citus.node_connection_timeout TO '5000'
AS $function$
DECLARE
  v_topics text[];
  v_now timestamptz := clock_timestamp();
  v_sql text := idem._outbox_backlog_query(ARRAY['idem.outbox_groups', 'idem.outbox_cursor_states', 'idem.outbox_commits',
                                                 'idem.outbox_events', 'idem.outbox_dead_letters']);
  v_found text[][];
  v_node record;
BEGIN
  SELECT b.topics INTO v_topics FROM idem._outbox_claim_begin(consumer, topics, 1, interval '1 second') b;
  -- Read without a lock, every tenant at once (on Citus, every node): what a claim would pick now.
  -- A group claimed meanwhile is skipped by idem.claim_tenant; one committed after is in the next.
  IF NOT idem._citus_mode() THEN
    RETURN QUERY EXECUTE v_sql || ' ORDER BY 1, 2' USING outbox_backlog.consumer, v_topics, v_now;
    RETURN;
  END IF;
  -- On Citus one node that cannot be reached fails the query over every shard; the groups of the
  -- nodes that can must not wait for it (their consumers would stall with it), so each node is
  -- then asked for its own shards, and the one that does not answer is named in a warning.
  BEGIN
    EXECUTE 'SELECT array_agg(ARRAY[b.tenant_id, b.topic]) FROM (' || v_sql || ') b'
       INTO v_found USING outbox_backlog.consumer, v_topics, v_now;
  EXCEPTION WHEN connection_exception THEN
    v_found := NULL;
    -- now as epoch seconds: a timestamp's text follows this session's DateStyle and TimeZone,
    -- which each node's own session would read otherwise.
    FOR v_node IN
      SELECT r.nodeid, r.success, r.result
        FROM run_command_on_all_nodes(format('SELECT array_agg(ARRAY[b.tenant_id, b.topic]) FROM idem._outbox_backlog_here(%L, %L, to_timestamp(%s)) b',
                                             outbox_backlog.consumer, v_topics, extract(epoch FROM v_now))) r
    LOOP
      IF NOT v_node.success THEN
        RAISE WARNING 'idem.outbox_backlog: node % (%) did not answer: its tenants'' events wait for it',
          v_node.nodeid, (SELECT n.nodename || ':' || n.nodeport FROM pg_dist_node n WHERE n.nodeid = v_node.nodeid)
          USING DETAIL = v_node.result;
      ELSIF v_node.result IS NOT NULL AND v_node.result <> '' THEN
        v_found := v_found || v_node.result::text[][];
      END IF;
    END LOOP;
  END;
  RETURN QUERY SELECT DISTINCT v_found[i][1], v_found[i][2]
                 FROM generate_subscripts(v_found, 1) i ORDER BY 1, 2;
END $function$
;
COMMENT ON FUNCTION idem.outbox_backlog(text,text[]) IS 'The (tenant, topic) groups with events a claim of the consumer would hand out now (past its cursor, no live claim, no retry pending), and those with dead letters asked to replay; read without locks. On Citus, call idem.claim_tenant for each tenant.';
REVOKE ALL ON FUNCTION idem.outbox_backlog(text,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.outbox_backlog(text,text[]) TO idem_consumer, idem_operator;
