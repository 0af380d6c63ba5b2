CREATE OR REPLACE FUNCTION idem.emit(tenant text, topic text, payload jsonb, key text DEFAULT NULL::text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_id bigint;
  v_txn bigint;
BEGIN
  PERFORM idem._require_tenant(tenant);  -- before the group is noted: a refused emit leaves nothing
  PERFORM idem._require_local_tenant(tenant);  -- on Citus: its commit is sequenced on its node
  v_txn := idem._outbox_note(tenant, topic, key, payload);  -- tenant, key, payload size; the group
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_topics t WHERE t.topic = emit.topic) THEN
    PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN', format('no outbox topic %L', emit.topic),
      'Create it once with idem.create_topic(topic); topics are registered so a typo cannot emit into nowhere.');
  END IF;
  INSERT INTO idem.outbox_events (tenant_id, topic, txn_id, event_id, key, payload, emitted_at)
    VALUES (tenant, topic, v_txn, nextval('idem.outbox_seq'), key, payload, clock_timestamp())
    RETURNING event_id INTO v_id;
  RETURN v_id;
END $function$
;
COMMENT ON FUNCTION idem.emit(text,text,jsonb,text) IS 'Writes an outbox event in the caller''s transaction (it exists if and only if that transaction commits); returns its id.';
REVOKE ALL ON FUNCTION idem.emit(text,text,jsonb,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.emit(text,text,jsonb,text) TO idem_service;
