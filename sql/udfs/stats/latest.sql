CREATE OR REPLACE FUNCTION idem.stats(since timestamp with time zone DEFAULT (now() - '01:00:00'::interval), until timestamp with time zone DEFAULT now())
 RETURNS TABLE(tenant_id text, resource text, generations bigint, attempts bigint, resumed bigint, takeovers bigint, completed bigint, released bigint, abandoned bigint, resolved_by_operator bigint, replays bigint, in_progress bigint, mismatches bigint, key_reused bigint, in_flight bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF since IS NULL OR until IS NULL OR since > until THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'the window needs a since and an until, since not after until',
      'For the last hour: idem.stats(now() - interval ''1 hour'').');
  END IF;
  -- What the trail and the records already hold (no write of its own on the hot path): the
  -- attempts that went on the record (checkpoint, complete, release, an abandoned one written by
  -- its taker) and every refusal, by the time they started (attempted_at, the trail's time
  -- index), plus the attempts in progress that have written nothing yet (idem.keys).
  RETURN QUERY
  WITH trail AS (
    -- An abandoned attempt was taken over when a later attempt of its generation came; one the
    -- purge wrote (a record past its TTL) was not.
    SELECT m.tenant_id, m.resource, m.scope_digest, m.generation, m.attempt, m.outcome,
           m.outcome = 'abandoned' AND EXISTS (
             SELECT FROM idem.mutations n
              WHERE n.tenant_id = m.tenant_id AND n.client_key = m.client_key  -- the trail's key index
                AND n.scope_digest = m.scope_digest AND n.generation = m.generation
                AND n.attempt > m.attempt) AS taken_over
      FROM idem.mutations m
     WHERE m.attempted_at >= since AND m.attempted_at < until AND idem._tenant_visible(m.tenant_id)),
  live AS (
    SELECT k.tenant_id, k.resource, k.scope_digest, k.generation, k.attempt
      FROM idem.keys k
     WHERE k.status = 'in_progress' AND k.attempted_at >= since AND k.attempted_at < until AND idem._tenant_visible(k.tenant_id)),
  attempts AS (
    SELECT t.tenant_id, t.resource, t.scope_digest, t.generation, t.attempt FROM trail t WHERE t.attempt IS NOT NULL
    UNION
    SELECT l.tenant_id, l.resource, l.scope_digest, l.generation, l.attempt FROM live l),
  per_attempt AS (
    SELECT a.tenant_id, a.resource, count(DISTINCT (a.scope_digest, a.generation)) AS generations, count(*) AS attempts
      FROM attempts a GROUP BY 1, 2),
  per_outcome AS (
    SELECT t.tenant_id, t.resource,
           count(*) FILTER (WHERE t.outcome = 'completed') AS completed,
           count(*) FILTER (WHERE t.outcome = 'released') AS released,
           count(*) FILTER (WHERE t.outcome = 'abandoned') AS abandoned,
           count(*) FILTER (WHERE t.taken_over) AS takeovers,
           count(*) FILTER (WHERE t.outcome = 'resolved_by_operator') AS resolved_by_operator,
           count(*) FILTER (WHERE t.outcome = 'replay') AS replays,
           count(*) FILTER (WHERE t.outcome = 'in_progress') AS in_progress,
           count(*) FILTER (WHERE t.outcome = 'mismatch') AS mismatches,
           count(*) FILTER (WHERE t.outcome = 'key_reused') AS key_reused
      FROM trail t GROUP BY 1, 2),
  per_live AS (SELECT l.tenant_id, l.resource, count(*) AS in_flight FROM live l GROUP BY 1, 2)
  SELECT g.tenant_id, g.resource,
         coalesce(a.generations, 0), coalesce(a.attempts, 0), coalesce(a.attempts - a.generations, 0),
         coalesce(o.takeovers, 0),
         coalesce(o.completed, 0), coalesce(o.released, 0), coalesce(o.abandoned, 0), coalesce(o.resolved_by_operator, 0),
         coalesce(o.replays, 0), coalesce(o.in_progress, 0), coalesce(o.mismatches, 0), coalesce(o.key_reused, 0),
         coalesce(l.in_flight, 0)
    FROM (SELECT x.tenant_id, x.resource FROM per_attempt x UNION SELECT y.tenant_id, y.resource FROM per_outcome y) g
    LEFT JOIN per_attempt a ON a.tenant_id = g.tenant_id AND a.resource = g.resource
    LEFT JOIN per_outcome o ON o.tenant_id = g.tenant_id AND o.resource = g.resource
    LEFT JOIN per_live l ON l.tenant_id = g.tenant_id AND l.resource = g.resource
   ORDER BY 1, 2;
END $function$
;
COMMENT ON FUNCTION idem.stats(timestamp with time zone,timestamp with time zone) IS 'Per tenant and route (resource), the outcomes of the attempts and refusals that started in the window, from the audit trail and the records in progress: generations, attempts, resumed (attempts after a generation''s first), takeovers (of a lease that ran out, each the holder''s lease lost), completed, released, abandoned, resolved by an operator, replays, in_progress and mismatch refusals, key_reused, in flight.';
REVOKE ALL ON FUNCTION idem.stats(timestamp with time zone,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.stats(timestamp with time zone,timestamp with time zone) TO idem_auditor, idem_operator;
