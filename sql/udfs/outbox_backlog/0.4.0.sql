CREATE OR REPLACE FUNCTION idem.outbox_backlog(consumer text, topics text[] DEFAULT NULL::text[])
 RETURNS TABLE(tenant_id text, topic text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_topics text[];
  v_now timestamptz := clock_timestamp();
BEGIN
  SELECT b.topics INTO v_topics FROM idem._outbox_claim_begin(consumer, topics, 1, interval '1 second') b;
  -- Read without a lock, every tenant at once (on Citus, every node): what a claim would pick now.
  -- A group claimed meanwhile is skipped by idem.claim_tenant; one committed after is in the next.
  RETURN QUERY
    SELECT g.tenant_id, g.topic FROM idem.outbox_groups g
      LEFT JOIN LATERAL (SELECT * FROM idem.outbox_cursor_states x
                          WHERE x.tenant_id = g.tenant_id AND x.consumer = outbox_backlog.consumer AND x.topic = g.topic
                          ORDER BY x.version DESC LIMIT 1) s ON true
     WHERE g.topic = ANY (v_topics)
       AND (s.claim_until IS NULL OR s.claim_until <= v_now)
       AND (s.not_before IS NULL OR s.not_before <= v_now)
       AND EXISTS (SELECT 1 FROM idem.outbox_commits m
                     JOIN idem.outbox_events e ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                    WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position >= coalesce(s.acked_position, 0)
                      AND (m.position, e.event_id) > (coalesce(s.acked_position, 0), coalesce(s.acked_event_id, 0)))
    UNION
    SELECT d.tenant_id, d.topic FROM idem.outbox_dead_letters d
     WHERE d.consumer = outbox_backlog.consumer AND d.topic = ANY (v_topics)
       AND d.replay_requested_at IS NOT NULL AND d.resolved_at IS NULL
       AND (d.claim_until IS NULL OR d.claim_until <= v_now)
     ORDER BY 1, 2;
END $function$
;
COMMENT ON FUNCTION idem.outbox_backlog(text,text[]) IS 'The (tenant, topic) groups with events a claim of the consumer would hand out now (past its cursor, no live claim, no retry pending), and those with dead letters asked to replay; read without locks. On Citus, call idem.claim_tenant for each tenant.';
REVOKE ALL ON FUNCTION idem.outbox_backlog(text,text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.outbox_backlog(text,text[]) TO idem_consumer, idem_operator;
