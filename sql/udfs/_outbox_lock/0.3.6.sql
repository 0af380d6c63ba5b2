CREATE OR REPLACE FUNCTION idem._outbox_lock(p_tenant text, p_consumer text, p_topic text, p_mode text)
 RETURNS idem.outbox_cursor_states
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  r idem.outbox_cursor_states;
BEGIN
  IF p_mode = 'skip' THEN
    PERFORM 1 FROM idem.outbox_cursors c
     WHERE c.tenant_id = p_tenant AND c.consumer = p_consumer AND c.topic = p_topic FOR UPDATE SKIP LOCKED;
  ELSIF p_mode = 'wait' THEN
    PERFORM 1 FROM idem.outbox_cursors c
     WHERE c.tenant_id = p_tenant AND c.consumer = p_consumer AND c.topic = p_topic FOR UPDATE;
  ELSE
    PERFORM 1 FROM idem.outbox_cursors c
     WHERE c.tenant_id = p_tenant AND c.consumer = p_consumer AND c.topic = p_topic FOR SHARE;
  END IF;
  IF NOT FOUND THEN
    RETURN r;
  END IF;
  -- Read after the lock, in a statement of its own: under READ COMMITTED it sees every state
  -- written by whoever held the lock before. A snapshot older than the newest state (REPEATABLE
  -- READ, SERIALIZABLE) must not act on what it sees.
  r := idem._outbox_state(p_tenant, p_consumer, p_topic);
  IF current_setting('transaction_isolation') <> 'read committed'
     AND idem._outbox_newest_state(p_tenant, p_consumer, p_topic) <> r.version THEN
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
      MESSAGE = format('the outbox state of consumer %L for %s/%s changed after this transaction''s snapshot', p_consumer, p_tenant, p_topic),
      HINT = 'Retry the transaction.';
  END IF;
  RETURN r;
END $function$
;
COMMENT ON FUNCTION idem._outbox_lock(text,text,text,text) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_lock(text,text,text,text) FROM PUBLIC;
