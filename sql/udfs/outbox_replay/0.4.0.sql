CREATE OR REPLACE FUNCTION idem.outbox_replay(consumer text, event_id bigint)
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
  d := idem._outbox_open_dead_letter(consumer, event_id);
  UPDATE idem.outbox_dead_letters x SET replay_requested_at = v_now, claim_token = NULL, claim_until = NULL
   WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
END $function$
;
COMMENT ON FUNCTION idem.outbox_replay(text,bigint) IS 'Hands a dead letter to the consumer again (at its next claim, before other events).';
REVOKE ALL ON FUNCTION idem.outbox_replay(text,bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.outbox_replay(text,bigint) TO idem_operator;
