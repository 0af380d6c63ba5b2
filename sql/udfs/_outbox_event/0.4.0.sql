CREATE OR REPLACE FUNCTION idem._outbox_event(p_consumer text, p_event_id bigint, OUT tenant_id text, OUT topic text, OUT commit_position bigint)
 RETURNS record
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  SELECT * INTO tenant_id, topic, commit_position FROM idem._outbox_event(p_consumer, NULL, p_event_id);
END $function$
;
COMMENT ON FUNCTION idem._outbox_event(text,bigint) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_event(text,bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION idem._outbox_event(p_consumer text, p_tenant text, p_event_id bigint, OUT tenant_id text, OUT topic text, OUT commit_position bigint)
 RETURNS record
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  -- p_tenant NULL: the event of any tenant. Given, only that tenant's (on Citus, its shard's): a
  -- statement of its own, as Citus routes a query by an equality on the tenant.
  IF p_tenant IS NULL THEN
    SELECT e.tenant_id, e.topic, c.position INTO tenant_id, topic, commit_position
      FROM idem.outbox_events e
      LEFT JOIN idem.outbox_commits c ON c.tenant_id = e.tenant_id AND c.topic = e.topic AND c.txn_id = e.txn_id
     WHERE e.event_id = p_event_id;
  ELSE
    SELECT e.tenant_id, e.topic, c.position INTO tenant_id, topic, commit_position
      FROM idem.outbox_events e
      LEFT JOIN idem.outbox_commits c ON c.tenant_id = e.tenant_id AND c.topic = e.topic AND c.txn_id = e.txn_id
     WHERE e.tenant_id = p_tenant AND e.event_id = p_event_id;
  END IF;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_OUTBOX_EVENT_UNKNOWN',
      format('no outbox event %s%s (never emitted, rolled back, or purged)', coalesce(p_event_id::text, 'NULL'),
             CASE WHEN p_tenant IS NULL THEN '' ELSE format(' of tenant %L', p_tenant) END));
  END IF;
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = p_consumer AND s.topic = _outbox_event.topic) THEN
    PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
      format('event %s is on topic %L, which consumer %L does not subscribe to', p_event_id, _outbox_event.topic, p_consumer));
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._outbox_event(text,text,bigint) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_event(text,text,bigint) FROM PUBLIC;
