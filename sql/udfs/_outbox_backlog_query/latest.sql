CREATE OR REPLACE FUNCTION idem._outbox_backlog_query(p_tables text[])
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  -- outbox_backlog's one query, over the tables named (outbox_groups, outbox_cursor_states,
  -- outbox_commits, outbox_events, outbox_dead_letters, or on Citus one node's colocated shards
  -- of them): $1 the consumer, $2 its topics, $3 now.
  SELECT format($q$
    SELECT g.tenant_id, g.topic FROM %1$s g
      LEFT JOIN LATERAL (SELECT * FROM %2$s x
                          WHERE x.tenant_id = g.tenant_id AND x.consumer = $1 AND x.topic = g.topic
                          ORDER BY x.version DESC LIMIT 1) s ON true
     WHERE g.topic = ANY ($2)
       AND (s.claim_until IS NULL OR s.claim_until <= $3)
       AND (s.not_before IS NULL OR s.not_before <= $3)
       AND EXISTS (SELECT 1 FROM %3$s m
                     JOIN %4$s e ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                    WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position >= coalesce(s.acked_position, 0)
                      AND (m.position, e.event_id) > (coalesce(s.acked_position, 0), coalesce(s.acked_event_id, 0)))
    UNION
    SELECT d.tenant_id, d.topic FROM %5$s d
     WHERE d.consumer = $1 AND d.topic = ANY ($2)
       AND d.replay_requested_at IS NOT NULL AND d.resolved_at IS NULL
       AND (d.claim_until IS NULL OR d.claim_until <= $3)$q$,
    p_tables[1], p_tables[2], p_tables[3], p_tables[4], p_tables[5])
$function$
;
COMMENT ON FUNCTION idem._outbox_backlog_query(text[]) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_backlog_query(text[]) FROM PUBLIC;
