CREATE OR REPLACE FUNCTION idem._outbox_backlog_here(consumer text, topics text[], p_now timestamptz)
 RETURNS TABLE(tenant_id text, topic text)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_shards text[];
BEGIN
  -- On Citus: outbox_backlog's query over the shards placed on this node alone, which each node
  -- answers for itself when outbox_backlog cannot reach them all through the coordinator.
  FOR v_shards IN
    SELECT * FROM idem._citus_local_shards(ARRAY['idem.outbox_groups', 'idem.outbox_cursor_states', 'idem.outbox_commits',
                                                 'idem.outbox_events', 'idem.outbox_dead_letters']::regclass[])
  LOOP
    RETURN QUERY EXECUTE idem._outbox_backlog_query(v_shards) USING consumer, topics, p_now;
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem._outbox_backlog_here(text,text[],timestamptz) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_backlog_here(text,text[],timestamptz) FROM PUBLIC;
