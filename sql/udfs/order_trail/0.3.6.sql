CREATE OR REPLACE FUNCTION idem.order_trail(order_id text)
 RETURNS TABLE(at timestamp with time zone, source text, what text, replay boolean, detail jsonb)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT m.attempted_at, 'mutation', m.mutation_type || ' ' || m.outcome, m.outcome = 'replay',
         jsonb_build_object('tenant_id', m.tenant_id, 'client_key', m.client_key, 'generation', m.generation,
                            'handler_response', m.handler_response, 'local_status', m.local_status,
                            'error', m.error_message)
    FROM idem.mutations m WHERE m.order_id = order_trail.order_id COLLATE "C"
  UNION ALL
  SELECT t.at, 'transition', coalesce(t.from_state, '(new)') || ' -> ' || t.to_state, false,
         jsonb_build_object('tenant_id', t.tenant_id, 'machine', t.machine, 'table', t.table_name,
                            'outcome', t.outcome, 'guard', t.guard_name, 'guard_result', t.guard_result)
    FROM idem.transition_log t WHERE t.row_key = order_trail.order_id COLLATE "C"
   ORDER BY 1, 2 $function$
;
COMMENT ON FUNCTION idem.order_trail(text) IS 'What happened to one order, oldest first: its mutations (create, refund, ..., replays marked) and its state transitions (runbook query 2).';
REVOKE ALL ON FUNCTION idem.order_trail(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.order_trail(text) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.order_trail(text) TO idem_operator;
