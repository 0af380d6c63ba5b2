CREATE OR REPLACE FUNCTION idem.reconcile(export regclass, since timestamp with time zone DEFAULT (now() - '24:00:00'::interval))
 RETURNS TABLE(kind text, tenant_id text, resource text, client_key text, object_id text, charge_id text, processor_key text, recorded_amount_cents bigint, processor_amount_cents bigint, currency text, at timestamp with time zone, detail text)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  missing text;
BEGIN
  -- Invoker's rights: the caller reads its export table and the trail its own row security lets
  -- it see; a definer's rights would let any auditor read any table through this argument.
  IF export IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'export must name the table holding the processor''s export',
      'Load it with examples/reconcile (processor-reconcile), or see docs/runbook.md "Reconcile with the processor".');
  END IF;
  IF since IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'since must be a time (the start of the window to reconcile)');
  END IF;
  -- A relation rows can be read from: an index or a composite type has columns too.
  IF (SELECT c.relkind FROM pg_class c WHERE c.oid = export) NOT IN ('r', 'p', 'v', 'm', 'f') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('export %s is not a table or a view', export),
      'Load the export into a table (docs/runbook.md has the CREATE TABLE).');
  END IF;
  SELECT string_agg(format('%s (%s)', need.col, need.kind), ', ' ORDER BY need.ord) INTO missing
    FROM (VALUES (1, 'id', 'text'), (2, 'object', 'text'), (3, 'idempotency_key', 'text'),
                 (4, 'amount_cents', 'integer'), (5, 'currency', 'text'), (6, 'status', 'text'),
                 (7, 'created', 'timestamptz'), (8, 'charge', 'text')) need(ord, col, kind)
   WHERE NOT EXISTS (
     SELECT FROM pg_attribute a
      WHERE a.attrelid = export AND a.attname = need.col AND a.attnum > 0 AND NOT a.attisdropped
        AND CASE need.kind
              WHEN 'text' THEN a.atttypid IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype)
              WHEN 'integer' THEN a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)
              ELSE a.atttypid = 'timestamptz'::regtype END);
  IF missing IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('export %s needs the column(s) %s (missing, or of another type)', export, missing),
      'An export has one row per charge or refund: id, object (''charge'' or ''refund''), idempotency_key (the processor key sent: idem.handler_key), amount_cents, currency, status, created, charge (a refund''s charge id). docs/runbook.md has the CREATE TABLE.');
  END IF;
  -- The trail: what each completed mutation recorded (handler_response: charge_id, or refund_id and
  -- charge_id; amount_cents and currency where the service recorded them), and the processor key
  -- each (record, generation) sent. Counterparts are looked up over the whole trail and the whole
  -- export; only what falls in the window is reported. The processor stamps whole seconds, so
  -- the export's window starts at the second since falls in.
  RETURN QUERY EXECUTE format($query$
  WITH raw AS (
    SELECT x.id::text AS id, x.object::text AS object, x.idempotency_key::text AS key, x.amount_cents::bigint AS amount,
           x.currency::text AS currency, x.status::text AS status, x.created AS created, x.charge::text AS charge,
           CASE WHEN x.id IS NULL THEN 'no id' WHEN x.object IS NULL THEN 'no object'
                WHEN x.object::text NOT IN ('charge', 'refund') THEN format('object %%L is neither ''charge'' nor ''refund''', x.object)
                WHEN x.created IS NULL THEN 'no created time' WHEN x.amount_cents IS NULL THEN 'no amount'
                WHEN x.status IS NULL THEN 'no status'
                WHEN lower(x.status::text) NOT IN ('succeeded', 'pending', 'failed', 'canceled', 'requires_action')
                  THEN format('status %%L is not one reconcile knows', x.status)
                WHEN x.object::text = 'refund' AND x.charge IS NULL THEN 'a refund with no charge' END AS unreadable
      FROM %s x
  ), e AS (
    -- One row per object: an export listed twice (a page fetched again) counts once, as its newest
    -- state; where two states carry one time, the one that moved money (never hide a charge).
    -- Money moved: succeeded or pending; failed, canceled and requires_action (a charge awaiting the
    -- buyer's authentication, a refund awaiting the processor) did not move it.
    SELECT DISTINCT ON (r.object, r.id) r.id, r.object, r.key, r.amount, r.currency, r.status, r.created, r.charge,
           lower(r.status) IN ('succeeded', 'pending') AS moved
      FROM raw r WHERE r.unreadable IS NULL
     ORDER BY r.object, r.id, r.created DESC, lower(r.status) IN ('succeeded', 'pending') DESC
  ), t AS (
    SELECT m.tenant_id, m.resource, m.client_key, m.scope_digest, m.generation, m.outcome, m.attempted_at, m.mutation_id,
           m.handler_response ->> 'refund_id' AS refund_id, m.handler_response ->> 'charge_id' AS charge_id,
           CASE WHEN (m.handler_response -> 'amount_cents')::text ~ '^-?[0-9]{1,18}$'
                THEN (m.handler_response ->> 'amount_cents')::bigint END AS amount,
           m.handler_response ->> 'currency' AS currency, m.handler_response ? 'error' AS refused
      FROM idem.mutations m
  ), recorded AS (
    -- Every mutation that completed with a charge or refund (or that an operator resolved with the
    -- holder's checkpoint naming it); one that recorded an error (a decline) records none.
    SELECT t.*, CASE WHEN t.refund_id IS NOT NULL THEN 'refund' ELSE 'charge' END AS object,
           coalesce(t.refund_id, t.charge_id) AS id, idem._handler_key(t.scope_digest, t.generation) AS pkey
      FROM t WHERE t.outcome IN ('completed', 'resolved_by_operator') AND NOT coalesce(t.refused, false)
       AND coalesce(t.refund_id, t.charge_id) <> ''
  ), rec AS (
    -- Who owns each: the first. A later one naming the same charge (a capture, a refused refund)
    -- does not take it over; one of another tenant is reported (cross_tenant).
    SELECT DISTINCT ON (o.object, o.id) o.* FROM recorded o ORDER BY o.object, o.id, o.attempted_at, o.mutation_id
  ), keys AS (
    SELECT DISTINCT ON (t.tenant_id, t.scope_digest, t.generation)
           t.tenant_id, t.resource, t.client_key, idem._handler_key(t.scope_digest, t.generation) AS pkey,
           t.outcome AS last_outcome, t.attempted_at
      FROM t WHERE t.generation IS NOT NULL
     ORDER BY t.tenant_id, t.scope_digest, t.generation, t.attempted_at DESC, t.mutation_id DESC
  ), owner AS (
    -- Whose each export row is: the mutation that recorded it, else the one whose processor key it carries.
    SELECT e.*, coalesce(r.tenant_id, k.tenant_id) AS tenant, coalesce(r.resource, k.resource) AS res,
           coalesce(r.client_key, k.client_key) AS ckey, r.id IS NOT NULL AS recorded, r.amount AS rec_amount,
           r.currency AS rec_currency, coalesce(r.attempted_at, k.attempted_at) AS trail_at, k.last_outcome,
           k.pkey IS NOT NULL AS ours
      FROM e LEFT JOIN rec r ON r.object = e.object AND r.id = e.id
             LEFT JOIN keys k ON k.pkey = e.key
  ), charged AS (
    SELECT o.*, row_number() OVER w AS n, first_value(o.id) OVER w AS first_id, count(*) OVER (PARTITION BY o.tenant, o.res) AS charges
      FROM owner o WHERE o.object = 'charge' AND o.moved AND o.res IS NOT NULL
    -- Processors stamp whole seconds: within one, the trail's order decides which came first.
    WINDOW w AS (PARTITION BY o.tenant, o.res ORDER BY o.created, o.trail_at, o.id)
  ), refunded AS (
    SELECT e.charge, sum(e.amount) AS amount, max(e.created) AS last_refund, count(*) AS refunds
      FROM e WHERE e.object = 'refund' AND e.moved AND e.charge IS NOT NULL GROUP BY e.charge
  )
  SELECT 'unreadable_export_row', NULL, NULL, NULL, r.id, r.charge, r.key, NULL::bigint, r.amount, r.currency, r.created,
         format('the export''s row cannot be reconciled: %%s', r.unreadable)
    FROM raw r
   WHERE r.unreadable IS NOT NULL AND (r.created IS NULL OR r.created >= date_trunc('second', $1))
  UNION ALL
  SELECT 'orphan_' || o.object, o.tenant, o.res, o.ckey, o.id, CASE WHEN o.object = 'charge' THEN o.id ELSE o.charge END,
         o.key, NULL::bigint, o.amount, o.currency, o.created,
         CASE WHEN o.ours THEN format('%%s %%s at the processor; no completed mutation recorded it (its key''s last outcome: %%s)',
                                      o.object, o.status, o.last_outcome)
              ELSE format('%%s %%s at the processor under a key none of our mutations sent', o.object, o.status) END
    FROM owner o
   WHERE o.object IN ('charge', 'refund') AND o.moved AND NOT o.recorded AND o.created >= date_trunc('second', $1)
  UNION ALL
  SELECT 'missing_' || r.object, r.tenant_id, r.resource, r.client_key, r.id, r.charge_id, r.pkey, r.amount, NULL::bigint,
         r.currency, r.attempted_at, format('a completed mutation recorded %%s %%s; the export has no such %%s', r.object, r.id, r.object)
    FROM rec r
   WHERE r.attempted_at >= $1 AND NOT EXISTS (SELECT FROM e WHERE e.object = r.object AND e.id = r.id)
  UNION ALL
  SELECT 'cross_tenant', x.tenant_id, x.resource, x.client_key, x.id, CASE WHEN x.object = 'charge' THEN x.id ELSE x.charge_id END,
         x.pkey, x.amount, NULL::bigint, x.currency, x.attempted_at,
         format('%%s %%s was recorded by tenant %%s first', x.object, x.id, f.tenant_id)
    FROM recorded x JOIN rec f ON f.object = x.object AND f.id = x.id
   WHERE x.tenant_id <> f.tenant_id AND x.attempted_at >= $1
  UNION ALL
  SELECT 'cross_tenant', x.tenant_id, x.resource, x.client_key, x.id, x.charge_id, x.pkey, x.amount, NULL::bigint, x.currency,
         x.attempted_at, format('refund %%s is of charge %%s, which tenant %%s recorded', x.id, x.charge_id, c.tenant_id)
    FROM rec x JOIN rec c ON c.object = 'charge' AND c.id = x.charge_id
   WHERE x.object = 'refund' AND x.tenant_id <> c.tenant_id AND x.attempted_at >= $1
  UNION ALL
  SELECT 'amount_mismatch', o.tenant, o.res, o.ckey, o.id, CASE WHEN o.object = 'charge' THEN o.id ELSE o.charge END,
         o.key, o.rec_amount, o.amount, o.currency, o.created,
         format('recorded %%s %%s, the processor has %%s %%s', coalesce(o.rec_amount::text, '?'),
                coalesce(o.rec_currency, '?'), o.amount, o.currency)
    FROM owner o
   WHERE o.recorded AND o.created >= date_trunc('second', $1)
     AND (o.rec_amount IS DISTINCT FROM o.amount AND o.rec_amount IS NOT NULL
          OR lower(o.rec_currency) IS DISTINCT FROM lower(o.currency) AND o.rec_currency IS NOT NULL)
  UNION ALL
  SELECT 'duplicate_charge', c.tenant, c.res, c.ckey, c.id, c.id, c.key, c.rec_amount, c.amount, c.currency, c.created,
         format('charge %%s of %%s for this resource (status %%s); the first: %%s', c.n, c.charges, c.status, c.first_id)
    FROM charged c
   WHERE c.n > 1 AND c.created >= date_trunc('second', $1)
  UNION ALL
  SELECT 'refund_exceeds_charge', coalesce(c.tenant, r.tenant_id), coalesce(c.res, r.resource), coalesce(c.ckey, r.client_key),
         f.charge, f.charge, coalesce(c.key, r.pkey), coalesce(c.rec_amount, r.amount), c.amount, coalesce(c.currency, r.currency),
         f.last_refund,
         format('%%s refund(s) add up to %%s; the charge was %%s at the processor%%s', f.refunds, f.amount,
                coalesce(c.amount::text, '(not in the export)'),
                CASE WHEN coalesce(c.rec_amount, r.amount) IS NOT NULL THEN format(', %%s recorded', coalesce(c.rec_amount, r.amount))
                     WHEN r.id IS NULL THEN ', and no mutation recorded it' ELSE '' END)
    FROM refunded f LEFT JOIN owner c ON c.object = 'charge' AND c.id = f.charge
                    LEFT JOIN rec r ON r.object = 'charge' AND r.id = f.charge
   WHERE f.last_refund >= date_trunc('second', $1) AND f.amount > coalesce(least(c.amount, coalesce(c.rec_amount, r.amount)), 0)
   ORDER BY 11, 1, 5
  $query$, export) USING since;
END $function$
;
COMMENT ON FUNCTION idem.reconcile(regclass,timestamp with time zone) IS 'Auditor: a processor export (charges and refunds, with the processor keys we sent) against the trail: orphan_charge/refund, missing_charge/refund, duplicate_charge, cross_tenant, amount_mismatch, refund_exceeds_charge, unreadable_export_row; one row per discrepancy.';
REVOKE ALL ON FUNCTION idem.reconcile(regclass,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.reconcile(regclass,timestamp with time zone) TO idem_auditor;
GRANT EXECUTE ON FUNCTION idem.reconcile(regclass,timestamp with time zone) TO idem_operator;
