CREATE OR REPLACE FUNCTION idem.double_charges_by_resource(since timestamp with time zone DEFAULT (now() - '24:00:00'::interval))
 RETURNS TABLE(tenant_id text, resource text, client_keys text[], executions bigint, order_ids text[], charge_ids text[], processor_keys text[], first_attempt timestamp with time zone, last_attempt timestamp with time zone)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
BEGIN
  IF since IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'since must be a time: a NULL window would answer that nothing was charged twice',
      'For the last day: idem.double_charges_by_resource(now() - interval ''24 hours'').');
  END IF;
  RETURN QUERY
  -- double_charges groups by idempotency record and generation, so two keys for one checkout (a
  -- quoted and a bare header, two callers, a key reused past its TTL) are two rows it never
  -- compares. Here the business resource the service passed to acquire (the demo's
  -- /checkout/<session>/complete) is the group, over every key and generation: more than one order
  -- or charge id, or executions under more than one (key, generation) that did not all record one
  -- and the same charge. Meaningful where the resource names the business object.
  WITH m AS (
    SELECT m.*, (m.outcome IN ('checkpoint', 'completed') AND m.handler_called)
                OR (m.outcome IN ('released', 'abandoned') AND m.handler_called IS NOT FALSE) AS executed,
           m.handler_response ->> 'charge_id' AS charge_id
      FROM idem.mutations m WHERE m.attempted_at >= since AND m.resource IS NOT NULL  -- no resource: no business object to compare
  ), runs AS (
    -- One row per (key, generation) that executed: did every one of its executions record a charge?
    SELECT m.tenant_id, m.resource, m.scope_digest, m.generation, bool_and(m.charge_id IS NOT NULL) AS charge_recorded
      FROM m WHERE m.executed GROUP BY m.tenant_id, m.resource, m.scope_digest, m.generation
  ), per_resource AS (
    SELECT r.tenant_id, r.resource, count(*) AS runs, bool_and(r.charge_recorded) AS all_recorded
      FROM runs r GROUP BY r.tenant_id, r.resource
  )
  SELECT m.tenant_id, m.resource,
         array_agg(DISTINCT m.client_key ORDER BY m.client_key),
         count(DISTINCT (m.scope_digest, m.generation, m.attempt)) FILTER (WHERE m.executed),
         array_agg(DISTINCT m.order_id ORDER BY m.order_id) FILTER (WHERE m.order_id IS NOT NULL),
         array_agg(DISTINCT m.charge_id ORDER BY m.charge_id) FILTER (WHERE m.charge_id IS NOT NULL),
         array_agg(DISTINCT idem._handler_key(m.scope_digest, m.generation) ORDER BY idem._handler_key(m.scope_digest, m.generation))
           FILTER (WHERE m.executed),
         min(m.attempted_at), max(m.attempted_at)
    FROM m LEFT JOIN per_resource p ON p.tenant_id = m.tenant_id AND p.resource = m.resource
   GROUP BY m.tenant_id, m.resource, p.runs, p.all_recorded
  HAVING count(DISTINCT m.order_id) > 1
      OR count(DISTINCT m.charge_id) > 1
      OR (coalesce(p.runs, 0) > 1 AND NOT (p.all_recorded AND count(DISTINCT m.charge_id) = 1))
   ORDER BY min(m.attempted_at);
END $function$
;
COMMENT ON FUNCTION idem.double_charges_by_resource(timestamp with time zone) IS 'Business resources (the resource passed to acquire) charged or ordered more than once under any keys and generations: two orders or charge ids, or executions under several keys not all recording one charge.';
REVOKE ALL ON FUNCTION idem.double_charges_by_resource(timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.double_charges_by_resource(timestamp with time zone) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.double_charges_by_resource(timestamp with time zone) TO idem_operator;
