CREATE OR REPLACE FUNCTION idem._outbox_write(r idem.outbox_cursor_states)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  -- A variable, not the row's "C" field: on Citus a delegated call's statements must filter by a
  -- value of the call's collation (docs/citus.md).
  v_tenant text := r.tenant_id;
BEGIN
  -- The group's next version: its newest + 1, read under the cursor's lock, which every writer
  -- holds. Not a node-wide sequence: on Citus a consumer's calls run on the tenant's node or on
  -- the coordinator, each drawing from its own range, and after a shard move from another
  -- node's; the newest state must still be the one written last. A snapshot that does not see
  -- the newest (REPEATABLE READ) meets the primary key: the write fails rather than go unseen.
  r.version := coalesce((SELECT max(s.version) FROM idem.outbox_cursor_states s
                          WHERE s.tenant_id = v_tenant AND s.consumer = r.consumer AND s.topic = r.topic), 0) + 1;
  r.written_at := clock_timestamp();
  INSERT INTO idem.outbox_cursor_states (tenant_id, consumer, topic, version, acked_position, acked_event_id,
      delivered_position, delivered_event_id, claim_token, claim_until, claim_events, claim_positions, claim_acked,
      last_token, head_event_id, head_attempts, head_error, not_before, last_claimed_at, written_at)
  VALUES (v_tenant, r.consumer, r.topic, r.version, r.acked_position, r.acked_event_id, r.delivered_position,
      r.delivered_event_id, r.claim_token, r.claim_until, r.claim_events, r.claim_positions, r.claim_acked,
      r.last_token, r.head_event_id, r.head_attempts, r.head_error, r.not_before, r.last_claimed_at, r.written_at);
END $function$
;
COMMENT ON FUNCTION idem._outbox_write(idem.outbox_cursor_states) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_write(idem.outbox_cursor_states) FROM PUBLIC;
