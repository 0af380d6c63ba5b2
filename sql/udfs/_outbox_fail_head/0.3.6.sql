CREATE OR REPLACE FUNCTION idem._outbox_fail_head(p_consumer idem.outbox_consumers, cur idem.outbox_cursor_states, p_error text, p_now timestamp with time zone)
 RETURNS idem.outbox_cursor_states
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  v_head bigint := cur.claim_events[1];
  v_head_position bigint := cur.claim_positions[1];
BEGIN
  IF cur.head_event_id IS DISTINCT FROM v_head THEN
    cur.head_event_id := v_head;
    cur.head_attempts := 0;
  END IF;
  cur.head_attempts := cur.head_attempts + 1;
  cur.head_error := left(p_error, 2000);
  cur.claim_token := NULL; cur.claim_until := NULL;
  cur.claim_events := NULL; cur.claim_positions := NULL; cur.claim_acked := NULL;
  IF cur.head_attempts >= p_consumer.max_attempts THEN
    INSERT INTO idem.outbox_dead_letters (tenant_id, consumer, event_id, topic, key, payload, position,
                                          emitted_at, committed_at, attempts, last_error, dead_at)
      SELECT e.tenant_id, cur.consumer, e.event_id, e.topic, e.key, e.payload, m.position, e.emitted_at,
             m.committed_at, cur.head_attempts, cur.head_error, p_now
        FROM idem.outbox_commits m JOIN idem.outbox_events e
          ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
       WHERE m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position = v_head_position AND e.event_id = v_head;
    cur.acked_position := v_head_position;
    cur.acked_event_id := v_head;
    cur.head_event_id := NULL; cur.head_attempts := 0; cur.head_error := NULL;
    cur.not_before := NULL;
  END IF;
  RETURN cur;
END $function$
;
COMMENT ON FUNCTION idem._outbox_fail_head(idem.outbox_consumers,idem.outbox_cursor_states,text,timestamp with time zone) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_fail_head(idem.outbox_consumers,idem.outbox_cursor_states,text,timestamp with time zone) FROM PUBLIC;
