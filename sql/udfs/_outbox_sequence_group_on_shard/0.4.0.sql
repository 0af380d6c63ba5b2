CREATE OR REPLACE FUNCTION idem._outbox_sequence_group_on_shard(p_tenant text, p_topic text, p_txn bigint, p_notify boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_events text := idem._citus_local_shard('idem.outbox_events', p_tenant);
  v_commits text := idem._citus_local_shard('idem.outbox_commits', p_tenant);
  v_groups text := idem._citus_local_shard('idem.outbox_groups', p_tenant);
  v_found boolean;
  v_position bigint;
BEGIN
  -- idem._outbox_sequence_group on Citus (docs/citus.md). At commit the transaction is outside any
  -- delegated call, and Citus refuses a distributed query from a backend its coordinator opened:
  -- the tenant's shards, which are on this node (emit ran here), are written directly.
  PERFORM set_config('citus.enable_manual_changes_to_shards', 'on', true);
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s e WHERE e.tenant_id = $1 AND e.topic = $2 AND e.txn_id = $3)', v_events)
     INTO v_found USING p_tenant, p_topic, p_txn;
  IF NOT v_found THEN RETURN; END IF;
  -- The group's next position: its newest + 1, read under the group's lock, which the commit
  -- callback holds until this commit is visible. No node-wide sequence: the positions move with
  -- the rows when the tenant's shards move, and the next one is still above the newest. A
  -- snapshot that does not see the newest (REPEATABLE READ) meets the primary key: the commit
  -- fails rather than reorder the group.
  EXECUTE format('SELECT coalesce(max(c.position), 0) + 1 FROM %s c WHERE c.tenant_id = $1 AND c.topic = $2', v_commits)
     INTO v_position USING p_tenant, p_topic;
  EXECUTE format('INSERT INTO %s (tenant_id, topic, position, txn_id, committed_at) VALUES ($1, $2, $3, $4, clock_timestamp())', v_commits)
    USING p_tenant, p_topic, v_position, p_txn;
  EXECUTE format('INSERT INTO %s (tenant_id, topic) VALUES ($1, $2) ON CONFLICT DO NOTHING', v_groups)
    USING p_tenant, p_topic;
  IF p_notify THEN
    PERFORM pg_notify('idem_outbox', p_topic);
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._outbox_sequence_group_on_shard(text,text,bigint,boolean) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_sequence_group_on_shard(text,text,bigint,boolean) FROM PUBLIC;
