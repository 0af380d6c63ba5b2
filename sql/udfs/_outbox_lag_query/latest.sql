CREATE OR REPLACE FUNCTION idem._outbox_lag_query(p_tables text[])
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  -- outbox_lag's one query, over the tables named (outbox_subscriptions, outbox_groups,
  -- outbox_cursor_states, outbox_commits, outbox_events, outbox_dead_letters, or on Citus one
  -- node's shards of them): per consumer and topic the backlog, the oldest unacked commit, the
  -- groups claimed and retrying, the open dead letters; NULL where none. Per group first, then
  -- per consumer and topic: on Citus the groups are on the workers and the subscriptions a
  -- reference table, which Citus cannot put on the outer side of a join with the groups.
  SELECT format($q$
    SELECT s.consumer, s.topic, b.backlog::bigint, b.oldest_unacked_committed_at,
           b.claimed_groups::bigint, b.retrying_groups::bigint, d.dead_letters::bigint
      FROM %1$s s
      LEFT JOIN (
        SELECT sub.consumer, sub.topic, sum(n.backlog) AS backlog, min(n.oldest_committed_at) AS oldest_unacked_committed_at,
               count(*) FILTER (WHERE c.claim_until > clock_timestamp()) AS claimed_groups,
               count(*) FILTER (WHERE c.head_attempts > 0) AS retrying_groups
          FROM %2$s g
          JOIN %1$s sub ON sub.topic = g.topic
          LEFT JOIN LATERAL (SELECT * FROM %3$s x
                              WHERE x.tenant_id = g.tenant_id AND x.consumer = sub.consumer AND x.topic = g.topic
                              ORDER BY x.version DESC LIMIT 1) c ON true
          LEFT JOIN LATERAL (
            SELECT count(*) AS backlog, min(m.committed_at) AS oldest_committed_at
              FROM (SELECT * FROM %4$s y
                     WHERE y.tenant_id = g.tenant_id AND y.topic = g.topic AND y.position >= coalesce(c.acked_position, 0)
                     ORDER BY y.position OFFSET 0) m  -- the position index from the cursor, not all commits
             CROSS JOIN LATERAL (SELECT x.event_id FROM %5$s x
                                  WHERE x.tenant_id = m.tenant_id AND x.topic = m.topic AND x.txn_id = m.txn_id
                                    AND (m.position, x.event_id) > (coalesce(c.acked_position, 0), coalesce(c.acked_event_id, 0))
                                  OFFSET 0) e) n ON true
         GROUP BY sub.consumer, sub.topic) b ON b.consumer = s.consumer AND b.topic = s.topic
      LEFT JOIN (SELECT x.consumer, x.topic, count(*) AS dead_letters FROM %6$s x
                  WHERE x.resolved_at IS NULL GROUP BY x.consumer, x.topic) d ON d.consumer = s.consumer AND d.topic = s.topic$q$,
    p_tables[1], p_tables[2], p_tables[3], p_tables[4], p_tables[5], p_tables[6])
$function$
;
COMMENT ON FUNCTION idem._outbox_lag_query(text[]) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_lag_query(text[]) FROM PUBLIC;
