CREATE OR REPLACE FUNCTION idem.key_reuse(window_size interval DEFAULT '24:00:00'::interval)
 RETURNS TABLE(tenant_id text, client_key text, caller_id text, resource text, order_ids text[], generations integer[], first_attempt timestamp with time zone, last_attempt timestamp with time zone, callers text[], resources text[])
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
BEGIN
  IF window_size IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'window_size must be an interval: a NULL window would answer that no key made two orders',
      'For the last day: idem.key_reuse(''24 hours'').');
  END IF;
  RETURN QUERY
  SELECT m.tenant_id, m.client_key, min(m.caller_id), min(m.resource),
         array_agg(DISTINCT m.order_id ORDER BY m.order_id), array_agg(DISTINCT m.generation ORDER BY m.generation),
         min(m.attempted_at), max(m.attempted_at),
         array_agg(DISTINCT m.caller_id ORDER BY m.caller_id), array_agg(DISTINCT m.resource ORDER BY m.resource)
    FROM idem.mutations m
   WHERE m.attempted_at >= clock_timestamp() - window_size AND m.order_id IS NOT NULL
   GROUP BY m.tenant_id, m.client_key
  HAVING count(DISTINCT m.order_id) > 1
   ORDER BY min(m.attempted_at);
END $function$
;
COMMENT ON FUNCTION idem.key_reuse(interval) IS 'The runbook''s alert: a client key of a tenant that produced two or more order ids within the window, in one record or under several callers or routes (callers, resources).';
REVOKE ALL ON FUNCTION idem.key_reuse(interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.key_reuse(interval) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.key_reuse(interval) TO idem_operator;
