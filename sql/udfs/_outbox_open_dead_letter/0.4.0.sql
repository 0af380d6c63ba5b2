CREATE OR REPLACE FUNCTION idem._outbox_open_dead_letter(p_consumer text, p_event_id bigint)
 RETURNS idem.outbox_dead_letters
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  d idem.outbox_dead_letters;
  v_tenant text;
BEGIN
  PERFORM idem._outbox_consumer(p_consumer);
  -- Its tenant first, then the row locked by it: a lock Citus takes on the tenant's shard.
  SELECT x.tenant_id INTO v_tenant FROM idem.outbox_dead_letters x
   WHERE x.consumer = p_consumer AND x.event_id = p_event_id AND x.resolved_at IS NULL;
  SELECT * INTO d FROM idem.outbox_dead_letters x
   WHERE x.tenant_id = v_tenant AND x.consumer = p_consumer AND x.event_id = p_event_id AND x.resolved_at IS NULL FOR UPDATE;
  -- Another tenant's dead letter is not there for a bound operator: the same answer as none, so
  -- event ids (one global sequence) probe nothing.
  IF NOT FOUND OR NOT idem._tenant_visible(d.tenant_id) THEN
    PERFORM idem._raise('ERR_OUTBOX_EVENT_UNKNOWN',
      format('consumer %L has no open dead letter %s', p_consumer, coalesce(p_event_id::text, 'NULL')),
      'SELECT * FROM idem.outbox_dead_letters WHERE resolved_at IS NULL lists them.');
  END IF;
  IF d.claim_until > clock_timestamp() THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('dead letter %s of consumer %L is being replayed by a worker right now', p_event_id, p_consumer),
      'Wait for its ack or nack (or its visibility to pass).');
  END IF;
  RETURN d;
END $function$
;
COMMENT ON FUNCTION idem._outbox_open_dead_letter(text,bigint) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_open_dead_letter(text,bigint) FROM PUBLIC;
