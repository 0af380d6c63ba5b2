CREATE OR REPLACE FUNCTION idem._outbox_lag_here()
 RETURNS TABLE(consumer text, topic text, backlog bigint, oldest_unacked_committed_at timestamptz,
               claimed_groups bigint, retrying_groups bigint, dead_letters bigint)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_shards text[];
BEGIN
  -- On Citus: outbox_lag's query over the shards placed on this node alone, one row per
  -- consumer and topic for each hash range here, which outbox_lag_counts adds up when it cannot
  -- reach every node through the coordinator.
  FOR v_shards IN
    SELECT * FROM idem._citus_local_shards(ARRAY['idem.outbox_subscriptions', 'idem.outbox_groups', 'idem.outbox_cursor_states',
                                                 'idem.outbox_commits', 'idem.outbox_events', 'idem.outbox_dead_letters']::regclass[])
  LOOP
    RETURN QUERY EXECUTE idem._outbox_lag_query(v_shards);
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem._outbox_lag_here() IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_lag_here() FROM PUBLIC;
