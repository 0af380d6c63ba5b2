CREATE OR REPLACE FUNCTION idem._outbox_backlog_here(consumer text, topics text[], p_now timestamptz)
 RETURNS TABLE(tenant_id text, topic text)
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
  -- On Citus: outbox_backlog's query over the shards placed on this node alone, which each node
  -- answers for itself when outbox_backlog cannot reach them all through the coordinator.
  -- Colocated shards cover one hash range, so each table's shard is found by the range's start.
  FOR v_min IN
    SELECT s.shardminvalue FROM pg_dist_shard s JOIN pg_dist_placement p ON p.shardid = s.shardid
     WHERE s.logicalrelid = 'idem.outbox_groups'::regclass
       AND p.groupid = (SELECT l.groupid FROM pg_dist_local_group l)
  LOOP
    RETURN QUERY EXECUTE idem._outbox_backlog_query(
      (SELECT array_agg((SELECT shard_name(t, s.shardid) FROM pg_dist_shard s
                                   WHERE s.logicalrelid = t AND s.shardminvalue = v_min) ORDER BY o)
                  FROM unnest(ARRAY['idem.outbox_groups', 'idem.outbox_cursor_states', 'idem.outbox_commits',
                                    'idem.outbox_events', 'idem.outbox_dead_letters']::regclass[]) WITH ORDINALITY u(t, o)))
      USING consumer, topics, p_now;
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem._outbox_backlog_here(text,text[],timestamptz) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_backlog_here(text,text[],timestamptz) FROM PUBLIC;
