CREATE OR REPLACE FUNCTION idem._outbox_nack(consumer text, tenant text, event_id bigint, token uuid, error text, retry_in interval)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  v_consumer idem.outbox_consumers;
  ev record;
  cur idem.outbox_cursor_states;
  d idem.outbox_dead_letters;
  v_now timestamptz := clock_timestamp();
  v_delay interval;
BEGIN
  v_consumer := idem._outbox_consumer(consumer);
  IF token IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'token must be the claim token idem.claim returned');
  END IF;
  IF error IS NULL OR btrim(error) = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'error must say why the event failed (it is kept with a dead letter)');
  END IF;
  IF retry_in IS NOT NULL AND (retry_in < interval '0' OR retry_in > interval '1 day') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('retry_in must be 0..1 day, got %s', retry_in));
  END IF;
  ev := idem._outbox_event(consumer, tenant, event_id);
  SELECT * INTO d FROM idem.outbox_dead_letters x
   WHERE x.tenant_id = ev.tenant_id AND x.consumer = _outbox_nack.consumer AND x.event_id = _outbox_nack.event_id FOR UPDATE;
  IF FOUND AND d.claim_token IS NOT NULL AND d.resolved_at IS NULL THEN
    IF d.claim_token <> token THEN
      PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
        format('replay of event %s is claimed by consumer %L under another token', event_id, consumer), 'Claim again.');
    END IF;
    UPDATE idem.outbox_dead_letters x
       SET attempts = x.attempts + 1, last_error = left(error, 2000), replay_requested_at = NULL,
           claim_token = NULL, claim_until = NULL
     WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
    RETURN 'dead_letter';
  END IF;
  cur := idem._outbox_lock(ev.tenant_id, _outbox_nack.consumer, ev.topic, 'wait');
  IF cur.claim_events IS NULL OR NOT (event_id = ANY (cur.claim_events)) THEN
    PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
      format('event %s is not in an open claim of consumer %L', event_id, consumer), 'Claim again.');
  END IF;
  IF cur.claim_token <> token THEN
    PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
      format('event %s is claimed by consumer %L under another token: this claim expired and was taken over, or the token is wrong', event_id, consumer),
      'Stop working on this batch and claim again.');
  END IF;
  IF event_id = ANY (cur.claim_acked) OR event_id <> cur.claim_events[1] THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('event %s is not the oldest unacked event of its claim (%s): a group is processed in commit order, so ack or nack %s first',
             event_id, cur.claim_events[1], cur.claim_events[1]));
  END IF;
  cur := idem._outbox_fail_head(v_consumer, cur, error, v_now);
  IF cur.head_event_id IS NOT NULL THEN
    v_delay := coalesce(retry_in, least(interval '1 second' * power(2, cur.head_attempts - 1), interval '5 minutes'));
    cur.not_before := v_now + v_delay;
  END IF;
  PERFORM idem._outbox_write(cur);
  RETURN CASE WHEN cur.head_event_id IS NULL THEN 'dead_letter' ELSE 'retry' END;
END $function$
;
COMMENT ON FUNCTION idem._outbox_nack(text,text,bigint,uuid,text,interval) IS 'idem.nack of the event of tenant, or of any tenant when NULL.';
REVOKE ALL ON FUNCTION idem._outbox_nack(text,text,bigint,uuid,text,interval) FROM PUBLIC;
