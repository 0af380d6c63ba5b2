CREATE OR REPLACE FUNCTION idem.outbox_lag_counts()
 RETURNS TABLE(consumer text, topic text, backlog bigint, oldest_unacked_committed_at timestamptz,
               claimed_groups bigint, retrying_groups bigint, dead_letters bigint, nodes_not_counted integer)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_rows jsonb := '[]';
  v_missing integer := 0;
BEGIN
  -- What idem.outbox_lag shows. On one node, one query. On Citus each node counts its own shards
  -- (idem._citus_ask_each_node) and the counts are added up: a node down, when an operator reads
  -- the lag, leaves its groups out, counted in nodes_not_counted, rather than failing the view.
  -- So inside a transaction block the block's own uncommitted events are not counted.
  IF NOT idem._citus_mode() THEN
    RETURN QUERY EXECUTE 'SELECT l.*, 0 FROM (' || idem._outbox_lag_query(ARRAY['idem.outbox_subscriptions', 'idem.outbox_groups',
      'idem.outbox_cursor_states', 'idem.outbox_commits', 'idem.outbox_events', 'idem.outbox_dead_letters']) || ') l';
    RETURN;
  END IF;
  SELECT coalesce(jsonb_agg(r.row_) FILTER (WHERE r.row_ IS NOT NULL), '[]'), count(*) FILTER (WHERE NOT a.answered)
    INTO v_rows, v_missing
    FROM idem._citus_ask_each_node('SELECT json_agg(l) FROM idem._outbox_lag_here() l', 'idem.outbox_lag', 'its groups are not counted') a
    LEFT JOIN LATERAL jsonb_array_elements(a.result::jsonb) r(row_) ON true;
  RETURN QUERY
    SELECT x.consumer, x.topic, sum(x.backlog)::bigint, min(x.oldest_unacked_committed_at),
           sum(x.claimed_groups)::bigint, sum(x.retrying_groups)::bigint, sum(x.dead_letters)::bigint, v_missing
      FROM jsonb_to_recordset(v_rows) AS x(consumer text, topic text, backlog bigint, oldest_unacked_committed_at timestamptz,
                                           claimed_groups bigint, retrying_groups bigint, dead_letters bigint)
     GROUP BY x.consumer, x.topic;
END $function$
;
COMMENT ON FUNCTION idem.outbox_lag_counts() IS 'The rows of idem.outbox_lag before its defaults: per consumer and topic the backlog, the oldest unacked commit, the groups claimed and retrying, the open dead letters (NULL where none), and on Citus the nodes that did not answer (their groups not counted).';
REVOKE ALL ON FUNCTION idem.outbox_lag_counts() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.outbox_lag_counts() TO idem_service, idem_consumer, idem_auditor, idem_operator;
