CREATE OR REPLACE FUNCTION idem._outbox_claim_replay(p_tenant text, d idem.outbox_dead_letters, p_token uuid, p_until timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  -- A dead letter whose replay was asked for, locked by the claim: true when it is handed out.
  -- The tenant comes as an argument rather than from the row: in a call Citus delegated, the
  -- statements' tenant must equal the call's, collation included (the row's is "C").
  IF d.claim_token IS NOT NULL THEN
    -- Its replay's claim ran out without an ack: the replay failed, like a nack of it, and the
    -- letter is dead again until an operator asks once more.
    UPDATE idem.outbox_dead_letters x
       SET attempts = x.attempts + 1, replay_requested_at = NULL, claim_token = NULL, claim_until = NULL,
           last_error = format('replay claim expired at %s without an ack',
                               to_char(d.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
     WHERE x.tenant_id = p_tenant AND x.consumer = d.consumer AND x.event_id = d.event_id;
    RETURN false;
  END IF;
  UPDATE idem.outbox_dead_letters x SET claim_token = p_token, claim_until = p_until
   WHERE x.tenant_id = p_tenant AND x.consumer = d.consumer AND x.event_id = d.event_id;
  RETURN true;
END $function$
;
COMMENT ON FUNCTION idem._outbox_claim_replay(text,idem.outbox_dead_letters,uuid,timestamp with time zone) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_claim_replay(text,idem.outbox_dead_letters,uuid,timestamp with time zone) FROM PUBLIC;
