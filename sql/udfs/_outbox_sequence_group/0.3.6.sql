CREATE OR REPLACE FUNCTION idem._outbox_sequence_group(p_tenant text, p_topic text, p_txn bigint, p_notify boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_position bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_events e
                  WHERE e.tenant_id = p_tenant AND e.topic = p_topic AND e.txn_id = p_txn) THEN
    RETURN;
  END IF;
  v_position := nextval('idem.outbox_seq');
  -- Never silent about order: a position at or below the group's newest (outbox_seq moved back)
  -- or a reused transaction id (the commit row's UNIQUE key) fails this commit.
  IF EXISTS (SELECT 1 FROM idem.outbox_commits c
              WHERE c.tenant_id = p_tenant AND c.topic = p_topic AND c.position >= v_position) THEN
    PERFORM idem._raise('ERR_INTERNAL',
      format('outbox position %s of %s/%s is not above the group''s newest: idem.outbox_seq was moved back', v_position, p_tenant, p_topic),
      'Set idem.outbox_seq past max(position) of idem.outbox_commits.');
  END IF;
  INSERT INTO idem.outbox_commits (tenant_id, topic, position, txn_id, committed_at)
    VALUES (p_tenant, p_topic, v_position, p_txn, clock_timestamp());
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_groups g WHERE g.tenant_id = p_tenant AND g.topic = p_topic) THEN
    -- A REPEATABLE READ emitter may not see a group row committed after its snapshot; the row
    -- only has to exist, so a serialization failure of this insert is not one of the emitter.
    BEGIN
      INSERT INTO idem.outbox_groups (tenant_id, topic) VALUES (p_tenant, p_topic) ON CONFLICT DO NOTHING;
    EXCEPTION WHEN serialization_failure THEN
      NULL;
    END;
  END IF;
  IF p_notify THEN
    PERFORM pg_notify('idem_outbox', p_topic);
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._outbox_sequence_group(text,text,bigint,boolean) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_sequence_group(text,text,bigint,boolean) FROM PUBLIC;
