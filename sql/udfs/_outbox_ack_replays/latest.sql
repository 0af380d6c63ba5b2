CREATE OR REPLACE FUNCTION idem._outbox_ack_replays(p_consumer text, p_tenant text, p_ids bigint[], p_token uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  d record;
  v_n integer := 0;
  v_now timestamptz := clock_timestamp();  -- a value: Citus refuses a volatile function in an UPDATE
BEGIN
  FOR d IN SELECT * FROM idem.outbox_dead_letters x
            WHERE x.tenant_id = p_tenant AND x.consumer = p_consumer AND x.event_id = ANY (p_ids)
            ORDER BY x.event_id FOR UPDATE LOOP
    IF d.resolution = 'replayed' AND d.claim_token = p_token THEN
      CONTINUE;  -- acked before under this same claim
    ELSIF d.resolved_at IS NOT NULL OR d.claim_token IS NULL THEN
      PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED', format('dead letter %s of consumer %L is not claimed for replay', d.event_id, p_consumer));
    ELSIF d.claim_token <> p_token THEN
      PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
        format('replay of event %s is claimed by consumer %L under another token', d.event_id, p_consumer), 'Claim again.');
    END IF;
    UPDATE idem.outbox_dead_letters x SET resolved_at = v_now, resolution = 'replayed', claim_until = NULL
     WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
    v_n := v_n + 1;
  END LOOP;
  RETURN v_n;
END $function$
;
COMMENT ON FUNCTION idem._outbox_ack_replays(text,text,bigint[],uuid) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_ack_replays(text,text,bigint[],uuid) FROM PUBLIC;
