CREATE OR REPLACE FUNCTION idem._outbox_consume_once(consumer text, tenant text, event_id bigint, token uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  ev record;
  cur idem.outbox_cursor_states;
  -- The call's tenant when it names one, never the row's: on Citus, a delegated call's statements
  -- must filter by the very value it was called with (its collation too), not by a "C" column's.
  v_tenant text;
BEGIN
  PERFORM idem._outbox_consumer(consumer);
  ev := idem._outbox_event(consumer, tenant, event_id);
  v_tenant := coalesce(tenant, ev.tenant_id);
  IF token IS NOT NULL THEN
    -- Fencing: hold the claim (a share lock until this transaction ends) so it cannot be taken
    -- over while the effect commits; a claim already taken over refuses the effect.
    -- A claimed replay of a dead letter is fenced by its own row; the group's cursor is locked
    -- only for the group's events (two workers each replaying the other's group must not wait on
    -- each other's cursors).
    PERFORM 1 FROM idem.outbox_dead_letters d
     WHERE d.tenant_id = v_tenant AND d.consumer = _outbox_consume_once.consumer AND d.event_id = _outbox_consume_once.event_id
       AND d.claim_token = token AND d.resolved_at IS NULL FOR SHARE;
    IF NOT FOUND THEN
      cur := idem._outbox_lock(v_tenant, _outbox_consume_once.consumer, ev.topic, 'share');
      -- coalesce: a group without an open claim (claim_token NULL) must refuse, not pass.
      IF NOT coalesce(cur.claim_token = token AND event_id = ANY (cur.claim_events), false) THEN
        PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
          format('event %s is not claimed by consumer %L under token %s (expired and taken over, or acked)', event_id, consumer, token),
          'Roll back this effect: another worker holds the event now.');
      END IF;
    END IF;
  END IF;
  INSERT INTO idem.outbox_consumed (tenant_id, consumer, event_id) VALUES (v_tenant, consumer, event_id)
    ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $function$
;
COMMENT ON FUNCTION idem._outbox_consume_once(text,text,bigint,uuid) IS 'idem.consume_once of the event of tenant, or of any tenant when NULL.';
REVOKE ALL ON FUNCTION idem._outbox_consume_once(text,text,bigint,uuid) FROM PUBLIC;
