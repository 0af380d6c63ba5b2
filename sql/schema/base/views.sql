-- The operator's views. Both read as their owner and filter for the reader (security_barrier).

-- Per consumer and topic: what is committed and not yet acked, and how old it is.
CREATE VIEW idem.outbox_lag WITH (security_barrier = true) AS
SELECT s.consumer, s.topic,
       coalesce(sum(b.backlog), 0)::bigint AS backlog,
       min(b.oldest_committed_at) AS oldest_unacked_committed_at,
       clock_timestamp() - min(b.oldest_committed_at) AS oldest_unacked_age,
       count(c.tenant_id) FILTER (WHERE c.claim_until > clock_timestamp()) AS claimed_groups,
       count(c.tenant_id) FILTER (WHERE c.head_attempts > 0) AS retrying_groups,
       (SELECT count(*) FROM idem.outbox_dead_letters d
         WHERE d.consumer = s.consumer AND d.topic = s.topic AND d.resolved_at IS NULL) AS dead_letters
  FROM idem.outbox_subscriptions s
  LEFT JOIN idem.outbox_groups g ON g.topic = s.topic
  LEFT JOIN LATERAL (SELECT * FROM idem.outbox_cursor_states x
                      WHERE x.tenant_id = g.tenant_id AND x.consumer = s.consumer AND x.topic = s.topic
                      ORDER BY x.version DESC LIMIT 1) c ON true
  LEFT JOIN LATERAL (
    SELECT count(*) AS backlog, min(m.committed_at) AS oldest_committed_at
      FROM (SELECT * FROM idem.outbox_commits y
             WHERE y.tenant_id = g.tenant_id AND y.topic = g.topic AND y.position >= coalesce(c.acked_position, 0)
             ORDER BY y.position OFFSET 0) m  -- the position index from the cursor, not all commits
     CROSS JOIN LATERAL (SELECT x.event_id FROM idem.outbox_events x
                          WHERE x.tenant_id = m.tenant_id AND x.topic = m.topic AND x.txn_id = m.txn_id
                            AND (m.position, x.event_id) > (coalesce(c.acked_position, 0), coalesce(c.acked_event_id, 0))
                          OFFSET 0) e) b ON true
 GROUP BY s.consumer, s.topic;
COMMENT ON VIEW idem.outbox_lag IS
  'Per consumer and topic: committed events not yet acked (backlog), the oldest one''s commit time and age, groups claimed or retrying now, open dead letters.';
GRANT SELECT ON idem.outbox_lag TO idem_service, idem_consumer, idem_auditor, idem_operator;

-- Every unresolved attempt: in progress (a live lease too: the runbook sends the operator here
-- while a dead holder's lease still runs), or released after a checkpoint.
CREATE VIEW idem.stuck_leases WITH (security_barrier = true) AS
SELECT k.tenant_id, k.client_key, k.caller_id, k.resource,
       idem._handle(k.tenant_id, k.scope_digest) AS handle,
       k.attempt, k.generation, k.status, k.recovery_point, k.recovery_data,
       k.lease_expires_at, k.last_error, k.attempted_at,
       CASE WHEN k.status = 'released'
              THEN 'released after a checkpoint: the next request resumes there'
            WHEN k.lease_expires_at > clock_timestamp()
              THEN 'leased: its holder may still finish (idem.retry_stuck if it died)'
            WHEN k.expires_at <= clock_timestamp()
              THEN 'lease ran out and the record expired: the next request starts a new generation'
            WHEN k.recovery_point IS NOT NULL
              THEN 'lease ran out after a checkpoint: the next request resumes there'
            ELSE 'lease ran out, not taken over: the next request resumes'
       END AS why,
       clock_timestamp() - coalesce(k.attempted_at, k.created_at) AS age,
       (k.status = 'released' OR k.lease_expires_at <= clock_timestamp()) AS overdue,
       idem._handler_key(k.scope_digest, k.generation) AS handler_key
  FROM idem.keys k
 WHERE (k.status = 'in_progress' OR (k.status = 'released' AND k.recovery_point IS NOT NULL))
   AND idem._tenant_visible(k.tenant_id);
COMMENT ON VIEW idem.stuck_leases IS
  'Every unresolved attempt (in progress, live lease or not, or released after a checkpoint), with its lease end, age, last recovery point, the processor''s key of its generation (handler_key) and whether it is overdue (no live lease). Readers see their bound tenants'' rows.';
GRANT SELECT ON idem.stuck_leases TO idem_auditor, idem_operator;
