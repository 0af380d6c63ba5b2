CREATE OR REPLACE FUNCTION idem.double_charges(since timestamp with time zone DEFAULT (now() - '24:00:00'::interval))
 RETURNS TABLE(tenant_id text, client_key text, caller_id text, resource text, generation integer, executions bigint, uncertain bigint, order_ids text[], charge_ids text[], processor_key text, first_attempt timestamp with time zone, last_attempt timestamp with time zone)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
BEGIN
  IF since IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'since must be a time: a NULL window would answer that nothing was charged twice',
      'For the last day: idem.double_charges(now() - interval ''24 hours'').');
  END IF;
  RETURN QUERY
  -- Per idempotency record (tenant, scope) and generation: a key reused after its TTL makes a new
  -- order by design (key_reuse lists those). A resume that called the handler again and got the
  -- same charge back (the processor's own idempotency) is not a double charge; several executing
  -- attempts are, unless every one of them recorded a charge id and they are all the same.
  -- uncertain: of the executions, the released or abandoned ones that may have called it.
  WITH m AS (
    SELECT m.*, (m.outcome IN ('checkpoint', 'completed') AND m.handler_called)
                OR (m.outcome IN ('released', 'abandoned') AND m.handler_called IS NOT FALSE) AS executed
      FROM idem.mutations m WHERE m.attempted_at >= since
  )
  SELECT m.tenant_id, min(m.client_key), min(m.caller_id), min(m.resource), m.generation,
         count(DISTINCT m.attempt) FILTER (WHERE m.executed) AS executions,
         count(DISTINCT m.attempt) FILTER (WHERE m.executed AND m.outcome IN ('released', 'abandoned')
                                             AND NOT coalesce(m.handler_response ? 'charge_id', false)) AS uncertain,
         array_agg(DISTINCT m.order_id ORDER BY m.order_id) FILTER (WHERE m.order_id IS NOT NULL) AS order_ids,
         array_agg(DISTINCT m.handler_response ->> 'charge_id' ORDER BY m.handler_response ->> 'charge_id')
           FILTER (WHERE m.handler_response ? 'charge_id') AS charge_ids,
         idem._handler_key(m.scope_digest, m.generation),
         min(m.attempted_at), max(m.attempted_at)
    FROM m
   GROUP BY m.tenant_id, m.scope_digest, m.generation
  HAVING count(DISTINCT m.order_id) > 1
      OR count(DISTINCT m.handler_response ->> 'charge_id') > 1
      OR count(DISTINCT m.attempt) FILTER (WHERE m.executed AND m.outcome IN ('checkpoint', 'completed')) >
         greatest(1, count(DISTINCT m.attempt) FILTER (WHERE m.executed AND m.outcome IN ('checkpoint', 'completed')
                                                       AND m.handler_response ? 'charge_id'))
      OR (count(DISTINCT m.attempt) FILTER (WHERE m.executed) > 1
          AND count(DISTINCT m.handler_response ->> 'charge_id') = 0
          AND count(*) FILTER (WHERE m.executed AND m.outcome IN ('released', 'abandoned')) > 0)
   ORDER BY min(m.attempted_at);
END $function$
;
COMMENT ON FUNCTION idem.double_charges(timestamp with time zone) IS 'Keys whose generation executed more than once, or made more than one order or charge: possible double charges, with the processor key to look up.';
REVOKE ALL ON FUNCTION idem.double_charges(timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.double_charges(timestamp with time zone) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.double_charges(timestamp with time zone) TO idem_operator;
