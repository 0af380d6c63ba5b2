CREATE OR REPLACE FUNCTION idem.claim_tenant(consumer text, tenant text, topics text[] DEFAULT NULL::text[], batch integer DEFAULT 100, visibility interval DEFAULT '00:00:30'::interval)
 RETURNS TABLE(event_id bigint, tenant_id text, topic text, key text, payload jsonb, emitted_at timestamp with time zone, committed_at timestamp with time zone, attempt integer, redelivered boolean, token uuid)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  v_consumer idem.outbox_consumers;
  v_topics text[];
  v_now timestamptz := clock_timestamp();
  v_until timestamptz;
  v_token uuid := gen_random_uuid();
  v_left integer;
  v_n integer;
  cand record;
  d idem.outbox_dead_letters;
  v_seen text[] := '{}';
  b record;
BEGIN
  b := idem._outbox_claim_begin(consumer, topics, batch, visibility);
  v_consumer := b.consumer_row;
  v_topics := b.topics;
  IF tenant IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must not be NULL', 'Pass a tenant idem.outbox_backlog(consumer) names, or call idem.claim for all of them.');
  END IF;
  v_until := v_now + idem._elapsed(visibility);
  v_left := batch;

  -- New groups get their cursor here, by one claim of the consumer at a time (a try-lock: a
  -- claim never waits for another; the next one picks up what this one skipped).
  IF idem._try_lock_key(hashtextextended('idem.outbox_discover:' || claim_tenant.consumer || chr(31) || claim_tenant.tenant, 0)) THEN
    INSERT INTO idem.outbox_cursors (tenant_id, consumer, topic)
      SELECT g.tenant_id, claim_tenant.consumer, g.topic FROM idem.outbox_groups g
       WHERE g.tenant_id = claim_tenant.tenant AND g.topic = ANY (v_topics)
         AND NOT EXISTS (SELECT 1 FROM idem.outbox_cursors c
                          WHERE c.tenant_id = g.tenant_id AND c.consumer = claim_tenant.consumer AND c.topic = g.topic)
      ON CONFLICT DO NOTHING;
  END IF;

  -- Replays of dead letters.
  FOR d IN SELECT * FROM idem.outbox_dead_letters x
            WHERE x.tenant_id = claim_tenant.tenant AND x.consumer = claim_tenant.consumer AND x.topic = ANY (v_topics)
              AND x.replay_requested_at IS NOT NULL AND x.resolved_at IS NULL
              AND (x.claim_until IS NULL OR x.claim_until <= v_now)
            ORDER BY x.replay_requested_at, x.event_id LIMIT v_left
              FOR UPDATE SKIP LOCKED LOOP
    CONTINUE WHEN NOT idem._outbox_claim_replay(claim_tenant.tenant, d, v_token, v_until);
    event_id := d.event_id; tenant_id := d.tenant_id; topic := d.topic; key := d.key; payload := d.payload;
    emitted_at := d.emitted_at; committed_at := d.committed_at; attempt := d.attempts + 1;
    redelivered := true; token := v_token;
    RETURN NEXT;
    v_left := v_left - 1;
  END LOOP;

  -- Groups with events past their cursor and no live claim, taken one at a time: pick one by its
  -- newest state, then lock it without waiting (idem._outbox_claim_group).
  LOOP
    EXIT WHEN v_left <= 0;
    SELECT c.tenant_id, c.topic INTO cand FROM idem.outbox_cursors c
      LEFT JOIN LATERAL (SELECT * FROM idem.outbox_cursor_states x
                          WHERE x.tenant_id = claim_tenant.tenant
                            AND x.tenant_id = c.tenant_id AND x.consumer = c.consumer AND x.topic = c.topic
                          ORDER BY x.version DESC LIMIT 1) s ON true
     WHERE c.tenant_id = claim_tenant.tenant AND c.consumer = claim_tenant.consumer AND c.topic = ANY (v_topics)
       AND NOT (c.topic = ANY (v_seen))
       AND (s.claim_until IS NULL OR s.claim_until <= v_now)
       AND (s.not_before IS NULL OR s.not_before <= v_now)
       -- Commits past the cursor drive (an index range from the cursor: nothing acked is read).
       -- OFFSET 0 keeps each EXISTS a correlated probe (the planner would otherwise turn it into
       -- a semi-join that reads every commit of the group), ORDER BY makes it walk the position
       -- index from the cursor rather than the txn_id index with a filter. On Citus each subquery
       -- names the tenant itself: a LIMIT or OFFSET subquery that only joins on it is planned over
       -- every shard on every node (a node down failed every tenant's claim).
       AND EXISTS (SELECT 1 FROM idem.outbox_commits m
                    WHERE m.tenant_id = claim_tenant.tenant
                      AND m.tenant_id = c.tenant_id AND m.topic = c.topic AND m.position >= coalesce(s.acked_position, 0)
                      AND EXISTS (SELECT 1 FROM idem.outbox_events e
                                   WHERE e.tenant_id = claim_tenant.tenant
                                     AND e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                                     AND (m.position, e.event_id) > (coalesce(s.acked_position, 0), coalesce(s.acked_event_id, 0))
                                  OFFSET 0)
                    ORDER BY m.position OFFSET 0)
     ORDER BY s.last_claimed_at NULLS FIRST, c.topic
     LIMIT 1;
    EXIT WHEN NOT FOUND;
    v_seen := v_seen || cand.topic;
    RETURN QUERY SELECT * FROM idem._outbox_claim_group(v_consumer, claim_tenant.tenant, cand.topic, v_left, v_token, v_until, v_now);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_left := v_left - v_n;
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem.claim_tenant(text,text,text[],integer,interval) IS 'idem.claim for one tenant: its groups only, so Citus runs it whole on the tenant''s node. Hands out up to batch events of the consumer''s topics, each group''s in commit order, under one token; never waits. Unacked after visibility, they go to the next claim.';
REVOKE ALL ON FUNCTION idem.claim_tenant(text,text,text[],integer,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.claim_tenant(text,text,text[],integer,interval) TO idem_consumer;
