CREATE OR REPLACE FUNCTION idem.purge_outbox(older_than interval DEFAULT '7 days'::interval, batch integer DEFAULT 10000)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  g record;
  v_cutoff timestamptz;
  v_consumers text[];
  v_safe bigint;
  v_txns bigint[];
  v_ids bigint[];
  v_n bigint := 0;
  c text;
  st idem.outbox_cursor_states;
  v_last bigint;
  v_citus boolean := idem._citus_mode();
  v_newest bigint;
BEGIN
  PERFORM idem._require_unbound('purge_outbox');
  IF older_than IS NULL OR older_than < interval '0' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'older_than must be an elapsed time of 0 or more');
  END IF;
  IF batch IS NULL OR batch NOT BETWEEN 1 AND 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')));
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'purge_outbox runs in READ COMMITTED',
      'Its snapshot must see every consumer, including one created a moment ago.');
  END IF;
  -- A consumer registered while this runs would not be waited for: create_consumer waits for us
  -- (its INSERT needs ROW EXCLUSIVE), and every statement below sees those registered before.
  LOCK TABLE idem.outbox_subscriptions IN SHARE MODE;
  v_cutoff := clock_timestamp() - older_than;
  FOR g IN SELECT * FROM idem.outbox_groups ORDER BY tenant_id, topic LOOP
    EXIT WHEN v_n >= batch;
    SELECT array_agg(s.consumer) INTO v_consumers FROM idem.outbox_subscriptions s WHERE s.topic = g.topic;
    -- Whole transactions every consumer of the topic has acked (a consumer without a cursor has
    -- acked nothing of the group).
    -- v_safe: the first position some consumer has not fully acked (the commit a consumer's ack
    -- stopped in is done only if its last event is acked).
    v_safe := NULL;
    FOREACH c IN ARRAY coalesce(v_consumers, '{}') LOOP
      -- One consumer's state at a time, in statements of their own: on Citus a function that
      -- reads a distributed table must not run inside another distributed query.
      st := idem._outbox_state(g.tenant_id, c, g.topic);
      SELECT max(e.event_id) INTO v_last FROM idem.outbox_commits m JOIN idem.outbox_events e
          ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
       WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position = st.acked_position;
      v_safe := least(v_safe, CASE WHEN st.acked_event_id >= coalesce(v_last, 0) THEN st.acked_position + 1 ELSE st.acked_position END);
    END LOOP;
    -- Superseded delivery states (never the newest: a state newer than this snapshot's newest
    -- is not seen, so what is deleted is older still).
    DELETE FROM idem.outbox_cursor_states x
     WHERE x.tenant_id = g.tenant_id AND x.topic = g.topic AND x.consumer = ANY (coalesce(v_consumers, '{}'))
       AND x.version < (SELECT max(y.version) FROM idem.outbox_cursor_states y
                         WHERE y.tenant_id = x.tenant_id AND y.consumer = x.consumer AND y.topic = x.topic);
    v_safe := coalesce(v_safe, 9223372036854775807);
    IF v_citus THEN
      -- On Citus a group's next position is its newest + 1 (idem._outbox_sequence_group_on_shard):
      -- its newest commit stays, or the next one would restart at 1, below every cursor.
      SELECT max(m.position) INTO v_newest FROM idem.outbox_commits m WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic;
      v_safe := least(v_safe, v_newest);
    END IF;
    -- A transaction with an open dead letter stays: replaying it needs the event (ack, nack and
    -- consume_once look it up) and its consume_once rows.
    SELECT array_agg(m.txn_id) INTO v_txns FROM (
      SELECT m.txn_id FROM idem.outbox_commits m
       WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position < v_safe AND m.committed_at < v_cutoff
         AND NOT EXISTS (SELECT 1 FROM idem.outbox_dead_letters d
                          WHERE d.tenant_id = m.tenant_id AND d.topic = m.topic AND d.position = m.position
                            AND d.resolved_at IS NULL)
       ORDER BY m.position LIMIT batch - v_n) m;
    CONTINUE WHEN v_txns IS NULL;
    WITH gone AS (
      DELETE FROM idem.outbox_events e
       WHERE e.tenant_id = g.tenant_id AND e.topic = g.topic AND e.txn_id = ANY (v_txns) RETURNING e.event_id)
    SELECT array_agg(event_id) INTO v_ids FROM gone;
    DELETE FROM idem.outbox_consumed k
     WHERE k.tenant_id = g.tenant_id AND k.consumer = ANY (coalesce(v_consumers, '{}')) AND k.event_id = ANY (v_ids);
    DELETE FROM idem.outbox_commits m WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.txn_id = ANY (v_txns);
    -- An empty commit (its events were rolled back with a savepoint) counts as one row.
    v_n := v_n + coalesce(cardinality(v_ids), 1);
  END LOOP;
  RETURN v_n;
END $function$
;
COMMENT ON FUNCTION idem.purge_outbox(interval,integer) IS 'Deletes events (with their commit rows and consume_once rows) that every consumer of their topic has acked and that committed more than older_than ago; at most about batch per call. Returns how many.';
REVOKE ALL ON FUNCTION idem.purge_outbox(interval,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.purge_outbox(interval,integer) TO idem_operator;
