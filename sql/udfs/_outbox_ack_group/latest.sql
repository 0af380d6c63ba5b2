CREATE OR REPLACE FUNCTION idem._outbox_ack_group(p_consumer text, p_tenant text, p_topic text, p_ids bigint[], p_positions bigint[], p_token uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  cur idem.outbox_cursor_states;
  v_acked bigint[];
  v_n integer := 0;
  i integer;
BEGIN
  cur := idem._outbox_lock(p_tenant, p_consumer, p_topic, 'wait');
  FOR i IN 1 .. cardinality(p_ids) LOOP
    IF cur.claim_events IS NOT NULL AND p_ids[i] = ANY (cur.claim_events) THEN
      IF cur.claim_token <> p_token THEN
        PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
          format('event %s is claimed by consumer %L under another token: this claim expired and was taken over, or the token is wrong',
                 p_ids[i], p_consumer),
          'Stop working on this batch and claim again; effects guarded by idem.consume_once are applied once whoever acks.');
      END IF;
      IF NOT (p_ids[i] = ANY (cur.claim_acked)) THEN  -- acked out of order before: not new
        v_n := v_n + 1;
      END IF;
    ELSIF cur.tenant_id IS NOT NULL AND p_positions[i] IS NOT NULL
          AND (p_positions[i], p_ids[i]) <= (cur.acked_position, cur.acked_event_id) AND cur.last_token = p_token THEN
      IF EXISTS (SELECT 1 FROM idem.outbox_dead_letters d
                  WHERE d.tenant_id = p_tenant AND d.consumer = p_consumer AND d.event_id = p_ids[i] AND d.resolved_at IS NULL) THEN
        PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
          format('event %s of consumer %L is a dead letter (its failures reached max_attempts)', p_ids[i], p_consumer),
          'An operator replays it with idem.outbox_replay, or closes it with idem.outbox_discard.');
      END IF;
      -- else: acked before under this same claim
    ELSIF cur.claim_events IS NULL AND cur.last_token = p_token AND p_positions[i] IS NOT NULL
          AND (p_positions[i], p_ids[i]) > (cur.acked_position, cur.acked_event_id) THEN
      PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
        format('event %s is not in the open claim of consumer %L: the claim was given back (nack), taken over, or never held it', p_ids[i], p_consumer),
        'Claim again.');
    ELSE
      PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
        format('event %s is not in an open claim of consumer %L under token %s', p_ids[i], p_consumer, p_token),
        'Ack only events that idem.claim handed out under that token, before another claim takes them over.');
    END IF;
  END LOOP;
  IF v_n = 0 THEN
    RETURN 0;
  END IF;
  v_acked := ARRAY(SELECT DISTINCT x FROM unnest(cur.claim_acked || p_ids) AS x WHERE x = ANY (cur.claim_events));
  i := 1;
  WHILE i <= cardinality(cur.claim_events) AND cur.claim_events[i] = ANY (v_acked) LOOP
    i := i + 1;
  END LOOP;
  IF i > 1 THEN
    cur.acked_position := cur.claim_positions[i - 1];
    cur.acked_event_id := cur.claim_events[i - 1];
    IF cur.head_event_id = ANY (cur.claim_events[1:i - 1]) THEN
      cur.head_event_id := NULL; cur.head_attempts := 0; cur.head_error := NULL;
    END IF;
  END IF;
  IF i > cardinality(cur.claim_events) THEN
    cur.claim_token := NULL; cur.claim_until := NULL;
    cur.claim_events := NULL; cur.claim_positions := NULL; cur.claim_acked := NULL;
  ELSE
    cur.claim_acked := ARRAY(SELECT x FROM unnest(v_acked) AS x WHERE x = ANY (cur.claim_events[i:]));
    cur.claim_events := cur.claim_events[i:];
    cur.claim_positions := cur.claim_positions[i:];
  END IF;
  PERFORM idem._outbox_write(cur);
  RETURN v_n;
END $function$
;
COMMENT ON FUNCTION idem._outbox_ack_group(text,text,text,bigint[],bigint[],uuid) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_ack_group(text,text,text,bigint[],bigint[],uuid) FROM PUBLIC;
