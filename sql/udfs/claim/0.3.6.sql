CREATE OR REPLACE FUNCTION idem.claim(consumer text, topics text[] DEFAULT NULL::text[], batch integer DEFAULT 100, visibility interval DEFAULT '00:00:30'::interval)
 RETURNS TABLE(event_id bigint, tenant_id text, topic text, key text, payload jsonb, emitted_at timestamp with time zone, committed_at timestamp with time zone, attempt integer, redelivered boolean, token uuid)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  v_consumer idem.outbox_consumers;
  v_topics text[];
  v_unknown text;
  v_now timestamptz := clock_timestamp();
  v_until timestamptz;
  v_token uuid := gen_random_uuid();
  v_left integer;
  cand record;
  cur idem.outbox_cursor_states;
  d record;
  v_ids bigint[];
  v_positions bigint[];
  v_last integer;
  v_taken_over boolean;
  v_seen text[] := '{}';
BEGIN
  PERFORM idem._require_flat_array(topics, 'topics');
  v_consumer := idem._outbox_consumer(consumer);
  IF batch IS NULL OR batch NOT BETWEEN 1 AND 10000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..10000, got %s', coalesce(batch::text, 'NULL')));
  END IF;
  IF visibility IS NULL OR visibility <= interval '0' OR visibility > interval '12 hours' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('visibility must be a positive elapsed time of at most 12 hours, got %s', coalesce(visibility::text, 'NULL')));
  END IF;
  v_until := v_now + idem._elapsed(visibility);
  IF topics IS NULL THEN
    SELECT array_agg(s.topic ORDER BY s.topic) INTO v_topics FROM idem.outbox_subscriptions s WHERE s.consumer = claim.consumer;
  ELSE
    SELECT t INTO v_unknown FROM unnest(topics) AS t
     WHERE t IS NULL OR NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = claim.consumer AND s.topic = t)
     LIMIT 1;
    IF FOUND THEN
      PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN',
        format('consumer %L does not subscribe to topic %s', claim.consumer, coalesce(quote_literal(v_unknown), 'NULL')),
        'Subscribe with idem.create_consumer(consumer, topics), or pass NULL for all of its topics.');
    END IF;
    v_topics := topics;
  END IF;
  v_left := batch;

  -- New groups get their cursor here, by one claim of the consumer at a time (a try-lock: a
  -- claim never waits for another; the next one picks up what this one skipped).
  IF idem._try_lock_key(hashtextextended('idem.outbox_discover:' || claim.consumer, 0)) THEN
    INSERT INTO idem.outbox_cursors (tenant_id, consumer, topic)
      SELECT g.tenant_id, claim.consumer, g.topic FROM idem.outbox_groups g
       WHERE g.topic = ANY (v_topics)
         AND NOT EXISTS (SELECT 1 FROM idem.outbox_cursors c
                          WHERE c.tenant_id = g.tenant_id AND c.consumer = claim.consumer AND c.topic = g.topic)
      ON CONFLICT DO NOTHING;
  END IF;

  -- Replays of dead letters.
  FOR d IN SELECT * FROM idem.outbox_dead_letters x
            WHERE x.consumer = claim.consumer AND x.topic = ANY (v_topics)
              AND x.replay_requested_at IS NOT NULL AND x.resolved_at IS NULL
              AND (x.claim_until IS NULL OR x.claim_until <= v_now)
            ORDER BY x.replay_requested_at, x.event_id LIMIT v_left
              FOR UPDATE SKIP LOCKED LOOP
    IF d.claim_token IS NOT NULL THEN
      -- Its replay's claim ran out without an ack: the replay failed, like a nack of it, and the
      -- letter is dead again until an operator asks once more.
      UPDATE idem.outbox_dead_letters x
         SET attempts = x.attempts + 1, replay_requested_at = NULL, claim_token = NULL, claim_until = NULL,
             last_error = format('replay claim expired at %s without an ack',
                                 to_char(d.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
       WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
      CONTINUE;
    END IF;
    UPDATE idem.outbox_dead_letters x SET claim_token = v_token, claim_until = v_until
     WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
    event_id := d.event_id; tenant_id := d.tenant_id; topic := d.topic; key := d.key; payload := d.payload;
    emitted_at := d.emitted_at; committed_at := d.committed_at; attempt := d.attempts + 1;
    redelivered := true; token := v_token;
    RETURN NEXT;
    v_left := v_left - 1;
  END LOOP;

  -- Groups with events past their cursor and no live claim, taken one at a time: pick one by its
  -- newest state, lock it without waiting, and decide again on the state read under the lock.
  LOOP
    EXIT WHEN v_left <= 0;
    SELECT c.tenant_id, c.topic INTO cand FROM idem.outbox_cursors c
      LEFT JOIN LATERAL (SELECT * FROM idem.outbox_cursor_states x
                          WHERE x.tenant_id = c.tenant_id AND x.consumer = c.consumer AND x.topic = c.topic
                          ORDER BY x.version DESC LIMIT 1) s ON true
     WHERE c.consumer = claim.consumer AND c.topic = ANY (v_topics)
       AND NOT (c.tenant_id || chr(31) || c.topic = ANY (v_seen))  -- tenants and topics hold no control characters
       AND (s.claim_until IS NULL OR s.claim_until <= v_now)
       AND (s.not_before IS NULL OR s.not_before <= v_now)
       -- Commits past the cursor drive (an index range from the cursor: nothing acked is read).
       -- OFFSET 0 keeps each EXISTS a correlated probe (the planner would otherwise turn it into
       -- a semi-join that reads every commit of the group), ORDER BY makes it walk the position
       -- index from the cursor rather than the txn_id index with a filter.
       AND EXISTS (SELECT 1 FROM idem.outbox_commits m
                    WHERE m.tenant_id = c.tenant_id AND m.topic = c.topic AND m.position >= coalesce(s.acked_position, 0)
                      AND EXISTS (SELECT 1 FROM idem.outbox_events e
                                   WHERE e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                                     AND (m.position, e.event_id) > (coalesce(s.acked_position, 0), coalesce(s.acked_event_id, 0))
                                  OFFSET 0)
                    ORDER BY m.position OFFSET 0)
     ORDER BY s.last_claimed_at NULLS FIRST, c.tenant_id, c.topic
     LIMIT 1;
    EXIT WHEN NOT FOUND;
    v_seen := v_seen || (cand.tenant_id || chr(31) || cand.topic);
    cur := idem._outbox_lock(cand.tenant_id, claim.consumer, cand.topic, 'skip');
    CONTINUE WHEN cur.tenant_id IS NULL;                      -- another claim holds it
    CONTINUE WHEN cur.claim_until > v_now OR cur.not_before > v_now;  -- claimed or nacked meanwhile
    v_taken_over := cur.claim_events IS NOT NULL;
    IF v_taken_over THEN
      -- Taking over a claim whose visibility ran out: it counts as a failure of its oldest event.
      cur := idem._outbox_fail_head(v_consumer, cur, format('claim expired at %s without an ack', to_char(cur.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')), v_now);
    END IF;
    SELECT array_agg(n.event_id ORDER BY n.position, n.event_id), array_agg(n.position ORDER BY n.position, n.event_id)
      INTO v_ids, v_positions
      FROM (SELECT e.event_id, m.position FROM idem.outbox_commits m
             CROSS JOIN LATERAL (SELECT x.event_id FROM idem.outbox_events x
                                  WHERE x.tenant_id = m.tenant_id AND x.topic = m.topic AND x.txn_id = m.txn_id
                                    AND (m.position, x.event_id) > (cur.acked_position, cur.acked_event_id)
                                  ORDER BY x.event_id OFFSET 0) e
             WHERE m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position >= cur.acked_position
             ORDER BY m.position, e.event_id LIMIT v_left) n;
    IF v_ids IS NULL THEN
      -- Nothing left to hand out (the last event went to the dead letters just now, or another
      -- claim acked it between the pick and the lock): keep a takeover's changes.
      IF v_taken_over THEN
        PERFORM idem._outbox_write(cur);
      END IF;
      CONTINUE;
    END IF;
    v_last := cardinality(v_ids);
    RETURN QUERY
      SELECT e.event_id, e.tenant_id, e.topic, e.key, e.payload, e.emitted_at, m.committed_at,
             CASE WHEN e.event_id = cur.head_event_id THEN cur.head_attempts + 1 ELSE 1 END,
             (m.position, e.event_id) <= (cur.delivered_position, cur.delivered_event_id), v_token
        FROM unnest(v_ids, v_positions) WITH ORDINALITY AS u(id, pos, n)
        JOIN idem.outbox_commits m ON m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position = u.pos
        JOIN idem.outbox_events e ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id AND e.event_id = u.id
       ORDER BY u.n;
    IF (v_positions[v_last], v_ids[v_last]) > (cur.delivered_position, cur.delivered_event_id) THEN
      cur.delivered_position := v_positions[v_last];
      cur.delivered_event_id := v_ids[v_last];
    END IF;
    cur.claim_token := v_token; cur.claim_until := v_until;
    cur.claim_events := v_ids; cur.claim_positions := v_positions; cur.claim_acked := '{}';
    cur.last_token := v_token; cur.not_before := NULL; cur.last_claimed_at := v_now;
    PERFORM idem._outbox_write(cur);
    v_left := v_left - v_last;
  END LOOP;
END $function$
;
COMMENT ON FUNCTION idem.claim(text,text[],integer,interval) IS 'Hands out up to batch events of the consumer''s topics, each group''s in commit order, under one token; never waits. Unacked after visibility, they go to the next claim.';
REVOKE ALL ON FUNCTION idem.claim(text,text[],integer,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.claim(text,text[],integer,interval) TO idem_consumer;
