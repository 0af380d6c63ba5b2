CREATE OR REPLACE FUNCTION idem.outbox_backlog(consumer text, topics text[] DEFAULT NULL::text[])
 RETURNS TABLE(tenant_id text, topic text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_topics text[];
  v_now timestamptz := clock_timestamp();
  v_found text[][];
  v_result text;
BEGIN
  SELECT b.topics INTO v_topics FROM idem._outbox_claim_begin(consumer, topics, 1, interval '1 second') b;
  -- Read without a lock, every tenant at once (on Citus, every node): what a claim would pick now.
  -- A group claimed meanwhile is skipped by idem.claim_tenant; one committed after is in the next.
  IF NOT idem._citus_mode() THEN
    RETURN QUERY EXECUTE idem._outbox_backlog_query(ARRAY['idem.outbox_groups', 'idem.outbox_cursor_states', 'idem.outbox_commits',
                                                          'idem.outbox_events', 'idem.outbox_dead_letters']) || ' ORDER BY 1, 2'
      USING outbox_backlog.consumer, v_topics, v_now;
    RETURN;
  END IF;
  -- On Citus each node lists the groups of its own shards (idem._citus_ask_each_node): one
  -- node down must not stall the tenants of the others. "now" goes as epoch seconds: a
  -- timestamp's text follows this session's DateStyle and TimeZone, which each node's session
  -- would read in its own.
  FOR v_result IN
    SELECT a.result FROM idem._citus_ask_each_node(
             format('SELECT array_agg(ARRAY[b.tenant_id, b.topic]) FROM idem._outbox_backlog_here(%L, %L, to_timestamp(%s)) b',
                    outbox_backlog.consumer, v_topics, extract(epoch FROM v_now)),
             'idem.outbox_backlog', 'its tenants'' events wait for it') a
     WHERE a.answered AND a.result IS NOT NULL
  LOOP
    v_found := v_found || v_result::text[][];
  END LOOP;
  RETURN QUERY SELECT DISTINCT v_found[i][1], v_found[i][2]
                 FROM generate_subscripts(v_found, 1) i ORDER BY 1, 2;
END $function$
;
COMMENT ON FUNCTION idem.outbox_backlog(text,text[]) IS 'The (tenant, topic) groups with events a claim of the consumer would hand out now (past its cursor, no live claim, no retry pending), and those with dead letters asked to replay; read without locks. On Citus, call idem.claim_tenant for each tenant.';
REVOKE ALL ON FUNCTION idem.outbox_backlog(text,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.outbox_backlog(text,text[]) TO idem_consumer, idem_operator;
