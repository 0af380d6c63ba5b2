CREATE OR REPLACE FUNCTION idem.outbox_discard(consumer text, event_id bigint, reason text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  d idem.outbox_dead_letters;
  v_now timestamptz := clock_timestamp();  -- a value: Citus refuses a volatile function in an UPDATE
BEGIN
  PERFORM idem._outbox_consumer(consumer);
  IF reason IS NULL OR btrim(reason) = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'reason must say why the dead letter is closed without being applied');
  END IF;
  d := idem._outbox_open_dead_letter(consumer, event_id);
  UPDATE idem.outbox_dead_letters x
     SET resolved_at = v_now, resolution = 'discarded', resolution_note = reason, claim_token = NULL, claim_until = NULL
   WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
END $function$
;
COMMENT ON FUNCTION idem.outbox_discard(text,bigint,text) IS 'Closes a dead letter without applying it, with the reason.';
REVOKE ALL ON FUNCTION idem.outbox_discard(text,bigint,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.outbox_discard(text,bigint,text) TO idem_operator;
