CREATE OR REPLACE FUNCTION idem._outbox_claim_group(p_consumer idem.outbox_consumers, p_tenant text, p_topic text, p_left integer, p_token uuid, p_until timestamp with time zone, p_now timestamp with time zone)
 RETURNS TABLE(event_id bigint, tenant_id text, topic text, key text, payload jsonb, emitted_at timestamp with time zone, committed_at timestamp with time zone, attempt integer, redelivered boolean, token uuid)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  cur idem.outbox_cursor_states;
  v_ids bigint[];
  v_positions bigint[];
  v_last integer;
  v_taken_over boolean;
BEGIN
  -- One group a claim picked by its newest state: lock it without waiting, decide again on the
  -- state read under the lock, and hand out up to p_left of its events in commit order.
  cur := idem._outbox_lock(p_tenant, p_consumer.consumer, p_topic, 'skip');
  IF cur.tenant_id IS NULL THEN RETURN; END IF;                       -- another claim holds it
  IF cur.claim_until > p_now OR cur.not_before > p_now THEN RETURN; END IF;  -- claimed or nacked meanwhile
  v_taken_over := cur.claim_events IS NOT NULL;
  IF v_taken_over THEN
    -- Taking over a claim whose visibility ran out: it counts as a failure of its oldest event.
    cur := idem._outbox_fail_head(p_consumer, cur, format('claim expired at %s without an ack', to_char(cur.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')), p_now);
  END IF;
  SELECT array_agg(n.event_id ORDER BY n.position, n.event_id), array_agg(n.position ORDER BY n.position, n.event_id)
    INTO v_ids, v_positions
    FROM (SELECT e.event_id, m.position FROM idem.outbox_commits m
           CROSS JOIN LATERAL (SELECT x.event_id FROM idem.outbox_events x
                                WHERE x.tenant_id = p_tenant  -- on Citus: this shard alone (claim_tenant says why)
                                  AND x.tenant_id = m.tenant_id AND x.topic = m.topic AND x.txn_id = m.txn_id
                                  AND (m.position, x.event_id) > (cur.acked_position, cur.acked_event_id)
                                ORDER BY x.event_id OFFSET 0) e
           WHERE m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position >= cur.acked_position
           ORDER BY m.position, e.event_id LIMIT p_left) n;
  IF v_ids IS NULL THEN
    -- Nothing left to hand out (the last event went to the dead letters just now, or another
    -- claim acked it between the pick and the lock): keep a takeover's changes.
    IF v_taken_over THEN
      PERFORM idem._outbox_write(cur);
    END IF;
    RETURN;
  END IF;
  v_last := cardinality(v_ids);
  RETURN QUERY
    SELECT e.event_id, e.tenant_id, e.topic, e.key, e.payload, e.emitted_at, m.committed_at,
           CASE WHEN e.event_id = cur.head_event_id THEN cur.head_attempts + 1 ELSE 1 END,
           (m.position, e.event_id) <= (cur.delivered_position, cur.delivered_event_id), p_token
      FROM unnest(v_ids, v_positions) WITH ORDINALITY AS u(id, pos, n)
      JOIN idem.outbox_commits m ON m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position = u.pos
      JOIN idem.outbox_events e ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id AND e.event_id = u.id
     ORDER BY u.n;
  IF (v_positions[v_last], v_ids[v_last]) > (cur.delivered_position, cur.delivered_event_id) THEN
    cur.delivered_position := v_positions[v_last];
    cur.delivered_event_id := v_ids[v_last];
  END IF;
  cur.claim_token := p_token; cur.claim_until := p_until;
  cur.claim_events := v_ids; cur.claim_positions := v_positions; cur.claim_acked := '{}';
  cur.last_token := p_token; cur.not_before := NULL; cur.last_claimed_at := p_now;
  PERFORM idem._outbox_write(cur);
END $function$
;
COMMENT ON FUNCTION idem._outbox_claim_group(idem.outbox_consumers,text,text,integer,uuid,timestamp with time zone,timestamp with time zone) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_claim_group(idem.outbox_consumers,text,text,integer,uuid,timestamp with time zone,timestamp with time zone) FROM PUBLIC;
