CREATE OR REPLACE FUNCTION idem._outbox_state(p_tenant text, p_consumer text, p_topic text)
 RETURNS idem.outbox_cursor_states
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  r idem.outbox_cursor_states;
BEGIN
  SELECT * INTO r FROM idem.outbox_cursor_states s
   WHERE s.tenant_id = p_tenant AND s.consumer = p_consumer AND s.topic = p_topic
   ORDER BY s.version DESC LIMIT 1;
  IF NOT FOUND THEN
    r.tenant_id := p_tenant; r.consumer := p_consumer; r.topic := p_topic; r.version := 0;
    r.acked_position := 0; r.acked_event_id := 0; r.delivered_position := 0; r.delivered_event_id := 0;
    r.head_attempts := 0;
  END IF;
  RETURN r;
END $function$
;
COMMENT ON FUNCTION idem._outbox_state(text,text,text) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_state(text,text,text) FROM PUBLIC;
