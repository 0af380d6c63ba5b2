CREATE OR REPLACE FUNCTION idem._outbox_ack(consumer text, tenant text, event_ids bigint[], token uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  g record;
  t text;
  v_tenants text[];
  v_n integer := 0;
  v_missing bigint;
  v_replays bigint[];
  v_ids bigint[];
  v_positions bigint[];
BEGIN
  PERFORM idem._require_flat_array(event_ids, 'event_ids');
  PERFORM idem._outbox_consumer(consumer);
  IF token IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'token must be the claim token idem.claim returned');
  END IF;
  IF event_ids IS NULL OR cardinality(event_ids) = 0 OR array_position(event_ids, NULL) IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'event_ids must be a non-empty array without NULLs');
  END IF;
  -- tenant NULL: the events of any tenants. Given, only that tenant's, in statements Citus routes
  -- to its shard by the equality on the tenant.
  IF tenant IS NULL THEN
    -- Not a correlated probe per id: Citus plans no correlated subquery beside unnest.
    SELECT x INTO v_missing FROM unnest(event_ids) AS x
     WHERE x <> ALL (ARRAY(SELECT e.event_id FROM idem.outbox_events e WHERE e.event_id = ANY (event_ids))) LIMIT 1;
    v_tenants := ARRAY(SELECT DISTINCT e.tenant_id FROM idem.outbox_events e WHERE e.event_id = ANY (event_ids) ORDER BY 1);
  ELSE
    SELECT x INTO v_missing FROM unnest(event_ids) AS x
     WHERE x <> ALL (ARRAY(SELECT e.event_id FROM idem.outbox_events e
                            WHERE e.tenant_id = _outbox_ack.tenant AND e.event_id = ANY (event_ids))) LIMIT 1;
    v_tenants := ARRAY[tenant];
  END IF;
  IF v_missing IS NOT NULL THEN
    PERFORM idem._outbox_event(consumer, tenant, v_missing);  -- raises ERR_OUTBOX_EVENT_UNKNOWN
  END IF;
  FOREACH t IN ARRAY v_tenants LOOP
    FOR g IN SELECT e.topic, array_agg(e.event_id ORDER BY e.event_id) AS ids,
                    array_agg(m.position ORDER BY e.event_id) AS positions
               FROM idem.outbox_events e
               LEFT JOIN idem.outbox_commits m ON m.tenant_id = e.tenant_id AND m.topic = e.topic AND m.txn_id = e.txn_id
              WHERE e.tenant_id = t AND e.event_id = ANY (event_ids)
              GROUP BY e.topic ORDER BY e.topic LOOP
      IF NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = _outbox_ack.consumer AND s.topic = g.topic) THEN
        PERFORM idem._outbox_event(consumer, t, g.ids[1]);  -- raises ERR_OUTBOX_NOT_CLAIMED
      END IF;
      -- One claim may hold replays of dead letters and the group's own events: each part is acked
      -- where it is kept.
      SELECT coalesce(array_agg(d.event_id), '{}') INTO v_replays FROM idem.outbox_dead_letters d
       WHERE d.tenant_id = t AND d.consumer = _outbox_ack.consumer AND d.event_id = ANY (g.ids)
         AND ((d.claim_token IS NOT NULL AND d.resolved_at IS NULL) OR (d.resolution = 'replayed' AND d.claim_token = token));
      IF cardinality(v_replays) > 0 THEN
        v_n := v_n + idem._outbox_ack_replays(consumer, t COLLATE "default", v_replays, token);
      END IF;
      IF cardinality(v_replays) < cardinality(g.ids) THEN
        SELECT array_agg(u.id ORDER BY u.n), array_agg(u.pos ORDER BY u.n) INTO v_ids, v_positions
          FROM unnest(g.ids, g.positions) WITH ORDINALITY AS u(id, pos, n) WHERE NOT (u.id = ANY (v_replays));
        -- COLLATE "default": the helpers' tenant must be of the call's collation, not of the
        -- topic's "C" column it is passed beside (Citus's forced delegation compares both).
        v_n := v_n + idem._outbox_ack_group(consumer, t COLLATE "default", g.topic, v_ids, v_positions, token);
      END IF;
    END LOOP;
  END LOOP;
  RETURN v_n;
END $function$
;
COMMENT ON FUNCTION idem._outbox_ack(text,text,bigint[],uuid) IS 'idem.ack of events of tenant, or of any tenants when NULL.';
REVOKE ALL ON FUNCTION idem._outbox_ack(text,text,bigint[],uuid) FROM PUBLIC;
