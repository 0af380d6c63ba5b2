CREATE OR REPLACE FUNCTION idem.citus_distribute()
 RETURNS SETOF text
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  t text;
  f regprocedure;
  v_forced boolean;
  fk record;
  v_fks text[] := '{}';
  v_log_distributed boolean;
  v_failed text;
BEGIN
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database',
      'Install Citus on every node, load it (shared_preload_libraries = ''citus''), CREATE EXTENSION citus, then call idem.citus_distribute() on the coordinator (docs/citus.md).');
  END IF;
  -- A NULL tenant would crash a node that plans the call without our planner hook in front of
  -- Citus's (extension/citus/tenant_call_guard.hpp): pg_idempotency must be loaded after citus.
  IF EXISTS (SELECT FROM run_command_on_all_nodes($$SELECT current_setting('shared_preload_libraries')$$) n
              WHERE NOT n.success OR n.result !~ '^(.*,)?\s*citus\s*,(.*,)?\s*pg_idempotency\s*(,.*)?$') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'pg_idempotency is not loaded after citus on every node',
      'Set shared_preload_libraries = ''citus,pg_idempotency'' (citus first) on every node, restart them, and call idem.citus_distribute() again (docs/citus.md).');
  END IF;
  IF NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = current_user) THEN
    RAISE EXCEPTION 'permission denied: idem.citus_distribute() needs a superuser' USING ERRCODE = 'insufficient_privilege';
  END IF;
  -- One copy of each shard: the fast path writes the tenant's shard on its node as a plain table
  -- (docs/citus.md), which would leave a second replica behind.
  IF current_setting('citus.shard_replication_factor')::integer <> 1 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('citus.shard_replication_factor is %s: pg_idempotency on Citus keeps one copy of each shard',
             current_setting('citus.shard_replication_factor')),
      'SET citus.shard_replication_factor = 1 before idem.citus_distribute(); use a standby per node for copies.');
  END IF;
  v_log_distributed := EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = 'idem.transition_log'::regclass);
  IF NOT v_log_distributed AND EXISTS (SELECT FROM idem.transition_log l WHERE l.tenant_id IS NULL) THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      'idem.transition_log holds transitions without a tenant (logged before 0.3.5, or of a table registered without a tenant column): a distributed table cannot hold them',
      'Purge or give those rows a tenant before distributing (docs/citus.md).');
  END IF;
  -- Our triggers (the record invariants, the append-only audit, the bindings' cache) fire on the
  -- shards, on the node of each: allowed for this call only.
  SET LOCAL citus.enable_unsafe_triggers = on;

  -- The shared tables, one copy on every node. Foreign keys between two of them are dropped for
  -- the conversion and made again between the reference tables (Citus would otherwise convert
  -- the referencing table as a local one first, and refuse it: the extension made it on every
  -- node). The workers' copies of the tables, which the extension made too, drop theirs as well.
  FOR fk IN SELECT c.conname, c.conrelid::regclass AS rel, pg_get_constraintdef(c.oid) AS def
              FROM pg_constraint c
             WHERE c.contype = 'f' AND c.connamespace = 'idem'::regnamespace
               AND c.conrelid NOT IN (SELECT p.logicalrelid FROM pg_dist_partition p) LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.rel, fk.conname);
    PERFORM run_command_on_workers(format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS %I', fk.rel, fk.conname));
    v_fks := v_fks || format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.rel, fk.conname, fk.def);
  END LOOP;
  FOREACH t IN ARRAY ARRAY['machine_tables', 'machine_states', 'machine_transitions', 'outbox_topics',
                           'outbox_consumers', 'outbox_subscriptions', 'tenant_bindings', 'consumer_bindings'] LOOP
    IF NOT EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = ('idem.' || t)::regclass) THEN
      PERFORM create_reference_table(('idem.' || t)::regclass);
      RETURN NEXT format('idem.%s: reference table', t);
    END IF;
  END LOOP;
  FOREACH t IN ARRAY v_fks LOOP
    EXECUTE t;
  END LOOP;

  -- A tenant's rows, all on its node: distributed by tenant_id, colocated with idem.keys.
  -- transition_log's key gains the tenant (Citus's keys include the distribution column).
  IF NOT v_log_distributed THEN
    ALTER TABLE idem.transition_log ALTER COLUMN tenant_id SET NOT NULL,
      DROP CONSTRAINT transition_log_pkey, ADD CONSTRAINT transition_log_pkey PRIMARY KEY (tenant_id, log_id);
  END IF;
  FOREACH t IN ARRAY ARRAY['keys', 'mutations', 'operator_actions', 'retired_keys', 'transition_log',
                           'outbox_groups', 'outbox_commits', 'outbox_events', 'outbox_cursors',
                           'outbox_cursor_states', 'outbox_consumed', 'outbox_dead_letters'] LOOP
    IF NOT EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = ('idem.' || t)::regclass) THEN
      IF t = 'keys' THEN
        PERFORM create_distributed_table('idem.keys'::regclass, 'tenant_id');
      ELSE
        PERFORM create_distributed_table(('idem.' || t)::regclass, 'tenant_id', colocate_with => 'idem.keys');
      END IF;
      RETURN NEXT format('idem.%s: distributed by tenant_id', t);
    END IF;
  END LOOP;

  -- The entry points that take a tenant run whole on its node, even inside a transaction block:
  -- its key lock, its record, its audit row and its outbox events are that node's; so are a
  -- consumer's consume_once and ack beside its effect (their helpers carry the call's own tenant
  -- value, as forced delegation wants). A claim, a nack, an operator's resolve_stuck and
  -- retry_stuck and one tenant's purge_expired come alone, outside a transaction block, where
  -- Citus delegates them unforced (inside one they run here and are refused,
  -- ERR_TENANT_NOT_LOCAL): docs/citus.md.
  FOR f, v_forced IN SELECT p.oid::regprocedure,
                            p.proname NOT IN ('claim_tenant', 'nack', 'resolve_stuck', 'retry_stuck', 'purge_expired')
               FROM pg_proc p
            WHERE p.pronamespace = 'idem'::regnamespace
              AND p.proname IN ('acquire', 'complete', 'checkpoint', 'release', 'handler_key', 'emit', 'resolve_stuck', 'retry_stuck',
                                'purge_expired',
                                'claim_tenant', 'ack', 'nack', 'consume_once')
              AND 'tenant' = ANY (p.proargnames)
              AND p.oid NOT IN (SELECT o.objid FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass
                                                              AND o.colocationid IS NOT NULL) LOOP
    PERFORM create_distributed_function(f, 'tenant', colocate_with => 'idem.keys', force_delegation => v_forced);
    RETURN NEXT format('%s: runs on the tenant''s node%s', f, CASE WHEN v_forced THEN '' ELSE ' (outside a transaction block)' END);
  END LOOP;

  -- Sequences give each node its own range (Citus leaves an extension's sequences alone).
  SELECT string_agg(format('node %s: %s', n.nodeid, n.result), '; ') INTO v_failed
    FROM run_command_on_all_nodes('SELECT idem.citus_prepare_node()') n WHERE NOT n.success;
  IF v_failed IS NOT NULL THEN
    RAISE EXCEPTION 'idem.citus_prepare_node() failed: %', v_failed;
  END IF;
  RETURN NEXT 'sequences: a range per node';
END $function$
;
COMMENT ON FUNCTION idem.citus_distribute() IS 'On a Citus coordinator (superuser): distribute pg_idempotency''s tables by tenant, colocated with idem.keys, the shared ones as reference tables, and register the tenant-first entry points to run on the tenant''s node. Idempotent: returns what it changed (docs/citus.md).';
REVOKE ALL ON FUNCTION idem.citus_distribute() FROM PUBLIC;
