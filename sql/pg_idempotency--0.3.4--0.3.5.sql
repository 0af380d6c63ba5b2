-- pg_idempotency 0.3.4 -> 0.3.5: corrections from an outside review of 0.3.4 (issue 20).
-- * Only tables an operator registered may be guarded by idem.enforce_transitions, and the
--   transition log records each row's tenant (a role bound to one tenant could write another's
--   order trail: the trigger writes the log as its owner). The log is written by an AFTER
--   trigger the registration creates: a row ON CONFLICT DO NOTHING skipped logged a transition.
-- * The processor key comes with the lease (acquire's handler_key), and handler_key(handle,
--   attempt) checks the lease like checkpoint does (a stale holder got the next generation's key).
-- * A released attempt whose handler may have run pins the generation's payload.
-- * The attempt that takes over an abandoned lease appends an audit row for it.
-- * Roles can be bound to outbox consumers; idem.stuck_leases shows every unresolved attempt;
--   idem.retry_stuck lets the service finish stuck work itself (details below).
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.3.5'" to load this file. \quit

-- ==== 0.3.5: the purge puts an abandoned attempt on the record (issue 20.5) ====

CREATE OR REPLACE FUNCTION idem.purge_expired(batch integer DEFAULT 1000)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  -- A deleted record's key stays locked until this transaction ends (an acquirer must not insert
  -- behind an uncommitted delete), so a call deletes at most this many: the shared lock table
  -- (max_locks_per_transaction x max_connections) must keep room for everyone else.
  c_max_keys constant integer := 500;
  v_want     integer;
  v_tenants  text[];
  v_digests  bytea[];
  v_rows     tid[];    -- where the scan read each locked record
  v_gone     bytea[];
  v_passed   bytea[] := '{}';  -- locked, found no longer history, given back: not again
  v_lock     bigint;
  v_removed  integer := 0;
  v_round    integer;
  v_now      timestamptz;
  v_forget   timestamptz;
  c          record;
BEGIN
  PERFORM idem._require_unbound('purge_expired');
  IF batch IS NULL OR batch < 1 OR batch > 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')),
      'Call purge_expired repeatedly with a small batch until it returns 0.');
  END IF;
  v_want := least(batch, c_max_keys);
  -- The scans compare with values fixed at the start, which the indexes can use as bounds: a
  -- comparison with clock_timestamp() itself is volatile, only a filter, and the scan then ran
  -- through every entry of the index whenever fewer than a batch were due (0.3.2: a call's cost
  -- grew with the whole store and with every generation remembered). A record due a moment
  -- later is the next call's.
  v_now := clock_timestamp();
  v_forget := v_now - idem._history_retention();
  -- Rounds, each two statements: lock the candidates the batch still lacks, then delete them.
  -- Another round only when this one locked as many as it could take and some of them had
  -- changed before their locks were taken (no longer history): it scans again, past those. A
  -- round that locked fewer has seen every candidate, and the call ends there (a second scan
  -- would read the due entries again, and under REPEATABLE READ lock keys its snapshot no
  -- longer describes).
  WHILE v_removed < v_want LOOP
    v_round := v_want - v_removed;
    -- Oldest history first, until the batch is full: keys in use are passed over, not counted,
    -- so a record held for long cannot starve the purge of the ones behind it. By purge_after
    -- (indexed, never after expires_at; complete does not move it), then expires_at itself: a
    -- record whose purge_after passed but which is not history yet is passed over. The lock
    -- test runs above the ordered scan (OFFSET 0 keeps it out of the subquery, and a volatile
    -- qual is never pushed into one), so only for the rows the LIMIT takes; CASE fixes its order: a key this very transaction holds (its lock is re-entrant) is
    -- passed over without taking a second hold.
    SELECT coalesce(array_agg(x.tenant_id), '{}'), coalesce(array_agg(x.scope_digest), '{}'), coalesce(array_agg(x.ctid), '{}')
      INTO v_tenants, v_digests, v_rows
      FROM (SELECT s.tenant_id, s.scope_digest, s.ctid
              FROM (SELECT k.tenant_id, k.scope_digest, k.ctid FROM idem.keys k
                     WHERE k.purge_after < v_now AND k.expires_at < v_now AND k.scope_digest <> ALL (v_passed)
                     ORDER BY k.purge_after OFFSET 0) s
             WHERE CASE WHEN idem._key_locked_by_me(idem._lock_key(s.scope_digest)) THEN false
                        ELSE idem._try_lock_key(idem._lock_key(s.scope_digest)) END
             LIMIT v_round) x;
    EXIT WHEN cardinality(v_digests) = 0;
    -- Under the keys' locks nobody else writes these rows, and this statement starts after every
    -- lock was taken: it deletes those still history, raising their retired generations; it never
    -- waits. Each row is fetched where the scan read it (a TID scan, no primary-key probe: 0.3.3's
    -- probes were a quarter of the purge's time); the key is compared too, since a slot can hold
    -- another row by now. A version written after the scan's snapshot and before the lock is not
    -- visible at that place any more: the record is passed over like one that is no longer history (its lock goes
    -- back), and the next call finds it by purge_after again.
    WITH gone AS (
      DELETE FROM idem.keys k
       USING unnest(v_tenants, v_digests, v_rows) AS l(tenant_id, scope_digest, row_at)
       WHERE k.ctid = l.row_at AND k.tenant_id = l.tenant_id COLLATE "C" AND k.scope_digest = l.scope_digest
         AND k.expires_at < clock_timestamp()
      RETURNING k.tenant_id, k.scope_digest, k.generation, k.status, k.attempt, k.client_key, k.caller_id,
                k.resource, k.mutation_type, k.attempts_in_generation, k.attempted_at, k.created_at,
                k.lease_expires_at
    ), abandoned AS (
      -- An attempt whose lease ran out and that nobody took over goes on the record as it leaves
      -- (it may have called the processor; a checkpointed one is never purged).
      INSERT INTO idem.mutations (tenant_id, scope_digest, client_key, caller_id, resource, generation, attempt,
                                  mutation_type, outcome, handler_called, error_message, retry_count,
                                  attempted_at, completed_at)
      SELECT gone.tenant_id, gone.scope_digest, gone.client_key, gone.caller_id, gone.resource, gone.generation,
             gone.attempt, gone.mutation_type, 'abandoned', NULL,
             format('lease ran out at %s; purged without a takeover', gone.lease_expires_at),
             gone.attempts_in_generation, coalesce(gone.attempted_at, gone.created_at), gone.lease_expires_at
        FROM gone WHERE gone.status = 'in_progress'
    ), retired AS (
      INSERT INTO idem.retired_keys AS g (tenant_id, scope_digest, generation, retired_at)
      SELECT gone.tenant_id, gone.scope_digest, gone.generation, clock_timestamp() FROM gone
      ON CONFLICT (tenant_id, scope_digest)
      DO UPDATE SET generation = greatest(g.generation, excluded.generation), retired_at = excluded.retired_at
      RETURNING g.scope_digest
    )
    SELECT coalesce(array_agg(r.scope_digest), '{}') INTO v_gone FROM retired r;
    v_removed := v_removed + cardinality(v_gone);
    -- Kept: the locks of the records that were no longer history go back now.
    IF cardinality(v_gone) < cardinality(v_digests) THEN
      SELECT v_passed || array_agg(d) INTO v_passed FROM unnest(v_digests) AS d WHERE d <> ALL (v_gone);
      PERFORM idem._unlock_key(idem._lock_key(d)) FROM unnest(v_digests) AS d WHERE d <> ALL (v_gone);
    END IF;
    EXIT WHEN cardinality(v_digests) < v_round;
  END LOOP;
  -- Generations of keys unused for the whole history retention are forgotten, a batch at a time,
  -- each under its key's lock (an acquirer or another purge may be reading or writing it), within
  -- the same 500 locks a call may keep (0.3.2 allowed 500 more here).
  FOR c IN SELECT o.tenant_id, o.scope_digest FROM idem.retired_keys o
            WHERE o.retired_at < v_forget
            ORDER BY o.retired_at LIMIT least(batch, c_max_keys - v_removed) LOOP
    v_lock := idem._lock_key(c.scope_digest);
    CONTINUE WHEN idem._key_locked_by_me(v_lock) OR NOT idem._try_lock_key(v_lock);
    DELETE FROM idem.retired_keys g
     WHERE g.tenant_id = c.tenant_id AND g.scope_digest = c.scope_digest AND g.retired_at < v_forget;
    IF NOT FOUND THEN
      PERFORM idem._unlock_key(v_lock);  -- nothing forgotten: nothing to keep the lock for
    END IF;
  END LOOP;
  RETURN v_removed;
END $$;

-- ==== 0.3.5: registered machine tables, the log's tenant (issue 20.2) ====

-- Names, not OIDs: a registration survives dump and restore, and means the same on every node.
CREATE TABLE idem.machine_tables (
  table_schema  text COLLATE "C" NOT NULL,
  table_name    text COLLATE "C" NOT NULL,
  machine       text COLLATE "C" NOT NULL,
  status_column text COLLATE "C" NOT NULL,
  key_column    text COLLATE "C",  -- NULL: the log's row_key is NULL
  tenant_column text COLLATE "C" NOT NULL,
  registered_by name NOT NULL,
  registered_at timestamptz NOT NULL,
  PRIMARY KEY (table_schema, table_name, status_column)  -- a table may guard several columns
);
COMMENT ON TABLE idem.machine_tables IS
  'Tables whose status column idem.enforce_transitions guards, registered by an operator (idem.register_machine_table).';
SELECT pg_catalog.pg_extension_config_dump('idem.machine_tables', '');
ALTER TABLE idem.machine_tables ENABLE ROW LEVEL SECURITY;
ALTER TABLE idem.machine_tables FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON idem.machine_tables TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY read_all ON idem.machine_tables FOR SELECT TO idem_auditor, idem_operator USING (true);
REVOKE ALL ON idem.machine_tables FROM PUBLIC;
GRANT SELECT ON idem.machine_tables TO idem_auditor, idem_operator;

ALTER TABLE idem.transition_log ADD COLUMN tenant_id text COLLATE "C";
COMMENT ON COLUMN idem.transition_log.tenant_id IS
  'The row''s tenant, from the registered tenant column; NULL for transitions logged before 0.3.5.';
COMMENT ON COLUMN idem.transition_log.table_name IS
  'The guarded table, schema-qualified (before 0.3.5: as search_path showed it).';
CREATE INDEX transition_log_key_idx ON idem.transition_log (row_key, at);
-- Auditors and operators bound to tenants read only their tenants' transitions (rows logged
-- before 0.3.5 have no tenant: only unbound roles read those).
DROP POLICY read_all ON idem.transition_log;
CREATE POLICY read_own_tenants ON idem.transition_log FOR SELECT TO idem_auditor, idem_operator
  USING (idem._tenant_visible(tenant_id));

-- The log is written by an AFTER trigger, once PostgreSQL wrote the row: the BEFORE guard also
-- runs for a row an INSERT ... ON CONFLICT DO NOTHING then does not insert. The guard refuses to
-- act without it; it logs only writes a guard saw. Nobody but idem.register_machine_table creates it.
CREATE FUNCTION idem._log_transitions() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_log_transitions' LANGUAGE C;
COMMENT ON FUNCTION idem._log_transitions() IS
  'AFTER row trigger created by idem.register_machine_table: logs each transition of a registered table once the row is written.';
REVOKE ALL ON FUNCTION idem._log_transitions() FROM PUBLIC;

-- Named to fire before the AFTER triggers of lowercase names (AFTER triggers fire in name order):
-- a transition one of them makes is logged after the one that made it fire.
CREATE FUNCTION idem._log_trigger_name(status_column text) RETURNS name
  LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN octet_length('_idem_log_' || status_column) <= 63 THEN '_idem_log_' || status_column
              ELSE '_idem_log_' || md5(status_column) END::name $$;

-- The table's log triggers for the status column, by function and argument (a renamed one too);
-- parent_trigger: cloned from a partitioned ancestor's.
CREATE FUNCTION idem._log_triggers(tbl regclass, status_column text)
  RETURNS TABLE (trigger_name name, cloned boolean)
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pg_temp AS $$
  SELECT t.tgname, t.tgparentid <> 0 FROM pg_trigger t
   WHERE t.tgrelid = tbl AND t.tgfoid = 'idem._log_transitions()'::regprocedure AND t.tgnargs = 1
     AND convert_from(split_part(encode(t.tgargs, 'escape'), '\000', 1)::bytea, 'UTF8') = status_column $$;

-- AFTER INSERT OR UPDATE, every UPDATE: a BEFORE trigger may set the status of an update that
-- names other columns. One per table and column: none is added where one exists (renamed, or
-- cloned from the partitioned table the table is a partition of).
CREATE FUNCTION idem._create_log_trigger(tbl regclass, status_column text) RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM idem._log_triggers(tbl, status_column)) THEN RETURN; END IF;
  -- A partition's own log trigger would clash with the clone of this one: the clone replaces it.
  PERFORM idem._drop_log_triggers(p.relid, status_column)
     FROM pg_partition_tree(tbl) p WHERE p.relid <> tbl AND p.isleaf IS NOT NULL;
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION idem._log_transitions(%L)',
                 idem._log_trigger_name(status_column), tbl, status_column);
END $$;
REVOKE ALL ON FUNCTION idem._create_log_trigger(regclass, text), idem._log_trigger_name(text),
                       idem._log_triggers(regclass, text) FROM PUBLIC;

CREATE FUNCTION idem.register_machine_table(tbl regclass, machine text, status_column text, key_column text,
                                            tenant_column text)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_schema text;
  v_table  text;
  v_kind   "char";
  v_persistence "char";
  v_column text;
  v_what   text;
BEGIN
  PERFORM idem._require_unbound('register a table for idem.enforce_transitions');
  IF tbl IS NULL OR machine IS NULL OR status_column IS NULL OR tenant_column IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'register_machine_table: only key_column may be NULL',
      'For example: SELECT idem.register_machine_table(''public.orders'', ''order'', ''status'', ''order_id'', ''tenant_id'').');
  END IF;
  SELECT n.nspname, c.relname, c.relkind, c.relpersistence INTO v_schema, v_table, v_kind, v_persistence
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tbl;
  -- Registering creates a trigger on the table: never on ours or the system's.
  IF v_schema IN ('idem', 'pg_catalog', 'information_schema', 'pg_toast') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('register_machine_table: %s is in schema %s, whose tables are not guarded', tbl::text, v_schema),
      'Register an application table.');
  END IF;
  IF v_kind NOT IN ('r', 'p') OR v_persistence <> 'p' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('register_machine_table: %s is not a permanent table', tbl::text),
      'Register the table the trigger guards (not a view, a temporary or an unlogged table).');
  END IF;
  IF NOT EXISTS (SELECT 1 FROM idem.machine_states s WHERE s.machine = register_machine_table.machine) THEN
    PERFORM idem._raise('ERR_MACHINE_UNKNOWN', format('no state machine named %L', machine),
      'Define its states in idem.machine_states first.');
  END IF;
  FOR v_what, v_column IN VALUES ('status', status_column), ('key', key_column), ('tenant', tenant_column) LOOP
    CONTINUE WHEN v_column IS NULL;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = tbl AND a.attname = v_column
                      AND a.attnum > 0 AND NOT a.attisdropped
                      AND (v_what <> 'status' OR a.attgenerated = '')
                      AND (v_what <> 'tenant' OR a.atttypid IN ('text'::regtype, 'varchar'::regtype))) THEN
      PERFORM idem._raise('ERR_ARGUMENT_INVALID',
        format('register_machine_table: %s has no %s column %I%s', tbl::text, v_what, v_column,
               CASE v_what WHEN 'status' THEN ' (that is not generated)' WHEN 'tenant' THEN ' of type text' ELSE '' END));
    END IF;
  END LOOP;
  INSERT INTO idem.machine_tables AS m (table_schema, table_name, machine, status_column, key_column, tenant_column,
                                        registered_by, registered_at)
  VALUES (v_schema, v_table, machine, status_column, key_column, tenant_column, session_user, clock_timestamp())
  ON CONFLICT ON CONSTRAINT machine_tables_pkey DO UPDATE
    SET machine = EXCLUDED.machine, key_column = EXCLUDED.key_column,
        tenant_column = EXCLUDED.tenant_column, registered_by = EXCLUDED.registered_by,
        registered_at = EXCLUDED.registered_at;
  PERFORM idem._create_log_trigger(tbl, status_column);
END $$;
COMMENT ON FUNCTION idem.register_machine_table(regclass, text, text, text, text) IS
  'Operator: let idem.enforce_transitions guard tbl''s status_column with machine, logging key_column as the row key and tenant_column as its tenant.';

CREATE FUNCTION idem._drop_log_triggers(tbl regclass, status_column text) RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_name name;
BEGIN
  FOR v_name IN SELECT l.trigger_name FROM idem._log_triggers(tbl, status_column) l WHERE NOT l.cloned LOOP
    EXECUTE format('DROP TRIGGER %I ON %s', v_name, tbl);
  END LOOP;
END $$;
REVOKE ALL ON FUNCTION idem._drop_log_triggers(regclass, text) FROM PUBLIC;

-- By schema and name, so that a registration can be removed whatever became of its table.
CREATE FUNCTION idem.unregister_machine_table(table_schema text, table_name text, status_column text DEFAULT NULL)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_removed integer := 0;
  v_table   regclass := to_regclass(format('%I.%I', table_schema, table_name));
  v_column  text;
BEGIN
  PERFORM idem._require_unbound('unregister a table from idem.enforce_transitions');
  FOR v_column IN
    DELETE FROM idem.machine_tables m
     WHERE m.table_schema = unregister_machine_table.table_schema AND m.table_name = unregister_machine_table.table_name
       AND (unregister_machine_table.status_column IS NULL OR m.status_column = unregister_machine_table.status_column)
    RETURNING m.status_column
  LOOP
    v_removed := v_removed + 1;
    IF v_table IS NOT NULL THEN
      PERFORM idem._drop_log_triggers(v_table, v_column);
    END IF;
  END LOOP;
  RETURN v_removed;
END $$;
COMMENT ON FUNCTION idem.unregister_machine_table(text, text, text) IS
  'Operator: removes the table''s registrations (one status column''s, or all); its guard then refuses every write (ERR_MACHINE_TABLE_UNREGISTERED). Returns how many were removed.';

-- A dropped table takes its registrations with it: a later table of the same name is not
-- guarded under the old one (event trigger on sql_drop).
CREATE FUNCTION idem._machine_tables_dropped() RETURNS event_trigger
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  DELETE FROM idem.machine_tables m
   USING pg_event_trigger_dropped_objects() d
   WHERE d.object_type = 'table' AND m.table_schema = d.schema_name AND m.table_name = d.object_name;
END $$;
REVOKE ALL ON FUNCTION idem._machine_tables_dropped() FROM PUBLIC;
CREATE EVENT TRIGGER idem_machine_tables_dropped ON sql_drop EXECUTE FUNCTION idem._machine_tables_dropped();

REVOKE ALL ON FUNCTION idem.register_machine_table(regclass, text, text, text, text),
                       idem.unregister_machine_table(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.register_machine_table(regclass, text, text, text, text),
                          idem.unregister_machine_table(text, text, text) TO idem_operator;

-- Tables guarded before 0.3.5 keep working when they have a tenant_id column: registered with
-- their trigger's arguments. Others refuse writes until an operator registers them.
INSERT INTO idem.machine_tables (table_schema, table_name, machine, status_column, key_column, tenant_column,
                                 registered_by, registered_at)
SELECT DISTINCT ON (g.nspname, g.relname, g.status_column) g.nspname, g.relname, g.machine, g.status_column,
       g.key_column, 'tenant_id', session_user, clock_timestamp()
  FROM (SELECT n.nspname, c.relname, t.tgname,
               convert_from(split_part(encode(t.tgargs, 'escape'), '\000', 1)::bytea, 'UTF8') AS machine,
               convert_from(split_part(encode(t.tgargs, 'escape'), '\000', 2)::bytea, 'UTF8') AS status_column,
               CASE WHEN t.tgnargs >= 3
                    THEN convert_from(split_part(encode(t.tgargs, 'escape'), '\000', 3)::bytea, 'UTF8') END AS key_column
          FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE t.tgfoid = 'idem.enforce_transitions()'::regprocedure AND t.tgnargs >= 2 AND t.tgparentid = 0
           AND EXISTS (SELECT 1 FROM pg_attribute a
                        WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)) g
 -- A guard naming a column the table no longer has stays unregistered (its writes fail as before).
 WHERE EXISTS (SELECT 1 FROM pg_attribute a
                WHERE a.attrelid = format('%I.%I', g.nspname, g.relname)::regclass AND a.attname = g.status_column
                  AND a.attnum > 0 AND NOT a.attisdropped)
 ORDER BY g.nspname, g.relname, g.status_column, g.tgname;
-- Partitioned tables first: their log triggers are cloned to their partitions.
SELECT idem._create_log_trigger(c.oid, m.status_column)
  FROM idem.machine_tables m
  JOIN pg_namespace n ON n.nspname = m.table_schema
  JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = m.table_name
 ORDER BY c.relispartition, m.table_schema, m.table_name, m.status_column;

-- The trail reads through row security: each role sees its own tenants' mutations and transitions.
CREATE OR REPLACE FUNCTION idem.order_trail(order_id text)
  RETURNS TABLE (at timestamptz, source text, what text, replay boolean, detail jsonb)
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pg_temp AS $$
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
   ORDER BY 1, 2 $$;

-- ==== 0.3.5: the processor key with the lease (issue 20.3) ====

ALTER TYPE idem.acquire_result ADD ATTRIBUTE handler_key text;

-- A holder asks with its handle (the lease's secret) and attempt; a stale holder is refused.
CREATE FUNCTION idem.handler_key(handle text, attempt bigint)
  RETURNS text
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_tenant text := idem._handle_tenant(handle);
  v_digest bytea := idem._handle_digest(handle);
  v_secret text := idem._handle_secret(handle);
  v_plain  text;
  r idem.keys;
BEGIN
  PERFORM idem._require_tenant(v_tenant);
  v_plain := idem._handle(v_tenant, v_digest);  -- messages name the record, never the secret
  IF attempt IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'attempt must not be NULL',
      'Pass the attempt column of the acquire result with the handle.');
  END IF;
  SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant COLLATE "C" AND k.scope_digest = v_digest;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('no processor key for key %s: no such record (expired and purged, or never acquired)', v_plain),
      'Do not call the processor; acquire the key again.');
  END IF;
  IF r.status <> 'in_progress' OR r.attempt <> handler_key.attempt THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('no processor key for key %s with attempt %s: the record is %s at attempt %s, generation %s',
             v_plain, attempt, r.status, r.attempt, r.generation),
      'Another attempt took over this key (or it was resolved); do not call the processor.');
  END IF;
  IF r.lease_secret_hash IS NOT NULL
     AND (v_secret IS NULL OR sha256(convert_to(v_secret, 'UTF8')) <> r.lease_secret_hash) THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('no processor key for key %s with attempt %s: the handle does not carry this lease''s secret', v_plain, attempt),
      'Pass the handle column of the acquire result that leased the key, unchanged.');
  END IF;
  RETURN idem._handler_key(v_digest, r.generation);
END $$;
COMMENT ON FUNCTION idem.handler_key(text, bigint) IS
  'The key to send the payment processor for this lease''s generation (acquire also returns it); ERR_LEASE_LOST unless handle and attempt are the live lease''s.';

-- The one-argument form answered for whatever generation the record had by then.
CREATE OR REPLACE FUNCTION idem.handler_key(handle text)
  RETURNS text
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM idem._raise('ERR_ARGUMENT_INVALID',
    'idem.handler_key(handle) was withdrawn in 0.3.5: it could answer for a later generation than the caller''s lease',
    'Read handler_key from the acquire result, or call idem.handler_key(handle, attempt).');
END $$;
COMMENT ON FUNCTION idem.handler_key(text) IS
  'Withdrawn in 0.3.5 (raises ERR_ARGUMENT_INVALID): use acquire''s handler_key or idem.handler_key(handle, attempt).';

REVOKE ALL ON FUNCTION idem.handler_key(text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.handler_key(text, bigint) TO idem_service;

-- ==== 0.3.5: a released payload stays pinned; abandoned attempts on the record (issue 20.4, 20.5) ====

-- _audit_holder takes the record's row type in a BEGIN ATOMIC body, which blocks a change of the
-- table: dropped and created again, the same.
DROP FUNCTION idem._audit_holder(idem.keys, text, boolean, text, jsonb, text, text, timestamptz);
ALTER TABLE idem.keys ADD COLUMN payload_pinned boolean NOT NULL DEFAULT false;
-- An audit row for what a holder just did to its record r.
CREATE FUNCTION idem._audit_holder(r idem.keys, p_outcome text, p_handler_called boolean, p_order_id text,
                                   p_handler_response jsonb, p_local_status text, p_error text,
                                   p_completed_at timestamptz)
  RETURNS void
  LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
  BEGIN ATOMIC
    SELECT idem._audit(r.tenant_id, r.scope_digest, r.client_key, r.caller_id, r.resource, r.generation, r.attempt,
                       r.mutation_type, p_outcome, p_handler_called, p_order_id, p_handler_response, p_local_status,
                       p_error, r.recovery_point, r.attempts_in_generation, coalesce(r.attempted_at, r.created_at),
                       p_completed_at);
  END;
REVOKE ALL ON FUNCTION idem._audit_holder(idem.keys, text, boolean, text, jsonb, text, text, timestamptz) FROM PUBLIC;
COMMENT ON COLUMN idem.keys.payload_pinned IS
  'An attempt of this generation may have called the handler (a release that did not say handler_called => false): another payload is a mismatch until the generation ends.';
-- An abandoned attempt may or may not have reached the handler: NULL says unknown.
ALTER TABLE idem.mutations ALTER COLUMN handler_called DROP NOT NULL;
COMMENT ON COLUMN idem.mutations.handler_called IS
  'Whether this attempt called the handler (the processor): NULL when nobody can know (released without saying, abandoned).';

DROP FUNCTION idem._decide(text, boolean, boolean, boolean, boolean, boolean);
CREATE FUNCTION idem._decide(status text, history boolean, lease_live boolean, own_transaction boolean,
                             has_checkpoint boolean, same_payload boolean, payload_pinned boolean)
  RETURNS text
  LANGUAGE c IMMUTABLE PARALLEL SAFE
  AS 'MODULE_PATHNAME', 'idem_decide';
COMMENT ON FUNCTION idem._decide(text, boolean, boolean, boolean, boolean, boolean, boolean) IS
  'The acquisition table (core/protocol/decision.cpp): what acquire does with a key, given what its record says.';
REVOKE ALL ON FUNCTION idem._decide(text, boolean, boolean, boolean, boolean, boolean, boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION idem._acquire_general(p_tenant text, p_digest bytea, p_key text, p_hash bytea,
                                                 p_caller text, p_resource text, p_lease interval, p_ttl interval,
                                                 p_on_busy text, p_mutation_type text)
  RETURNS idem.acquire_result
  LANGUAGE plpgsql
  SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r          record;   -- the key's row, with row_xmin: who wrote this version
  res        idem.acquire_result;
  v_lease    interval := idem._lease(p_lease);
  v_ttl      interval := idem._ttl(p_ttl);
  v_lock     bigint := idem._lock_key(p_digest);
  v_locked   boolean := false;
  v_found    boolean;
  v_own      boolean;
  v_decision text;
  v_now      timestamptz;
  v_wait     boolean;
  v_deadline timestamptz;
  v_poll     float8 := 0.002;
  v_retired  integer;
  v_secret   text := replace(gen_random_uuid()::text, '-', '');  -- 122 random bits, for a holder only
BEGIN
  PERFORM idem._require_tenant(p_tenant);
  IF p_on_busy IS NULL OR p_on_busy NOT IN ('reject', 'wait') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('on_busy must be ''reject'' or ''wait'', not %s', coalesce(quote_literal(p_on_busy), 'NULL')));
  END IF;
  IF p_mutation_type IS NULL OR p_mutation_type NOT IN ('create', 'capture', 'refund', 'void') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('mutation_type must be create, capture, refund or void, not %s', coalesce(quote_literal(p_mutation_type), 'NULL')));
  END IF;
  PERFORM idem._require_durable_store();
  -- Only READ COMMITTED can see a holder finish (a new snapshot per statement); an older snapshot
  -- answers at once rather than wait for a result it could not read.
  v_wait := p_on_busy = 'wait' AND current_setting('transaction_isolation') = 'read committed';
  -- Only a waiter needs a deadline (reject mode reads no setting for it).
  v_deadline := CASE WHEN v_wait THEN clock_timestamp() + idem._wait_timeout() END;
  res.handle := idem._handle(p_tenant, p_digest);

  LOOP
    SELECT k.status, k.attempt, k.generation, k.payload_hash, k.recovery_point, k.recovery_data,
           k.response_status, k.response_headers, k.response_body, k.order_id, k.lease_expires_at,
           k.expires_at, k.attempts_in_generation, k.mutation_type, k.payload_pinned, k.client_key,
           k.caller_id, k.resource, k.attempted_at, k.created_at, k.xmin AS row_xmin
      INTO r FROM idem.keys k
     WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest;
    v_found := FOUND;
    v_now := clock_timestamp();
    v_own := v_found AND r.status = 'in_progress' AND idem._written_by_current_transaction(r.row_xmin);
    IF v_found THEN
      -- The same request: the same fingerprint for the same kind of mutation (a refund under a
      -- capture's key and body is another request, refused like another body).
      v_decision := idem._decide(r.status, r.expires_at <= v_now, r.lease_expires_at > v_now, v_own,
                                 r.recovery_point IS NOT NULL,
                                 r.payload_hash = p_hash AND r.mutation_type = p_mutation_type, r.payload_pinned);
    ELSE
      v_decision := 'insert';
    END IF;

    IF v_decision IN ('replay', 'mismatch', 'busy') THEN
      IF v_locked THEN
        PERFORM idem._unlock_key(v_lock);
        v_locked := false;
      END IF;
      IF v_decision = 'busy' AND v_wait AND NOT v_own AND v_now < v_deadline THEN
        PERFORM pg_sleep(v_poll);
        v_poll := least(v_poll * 2, 0.05);
        CONTINUE;
      END IF;
      res.generation := r.generation;
      IF v_decision = 'replay' THEN
        res.outcome := 'replay';
        res.order_id := r.order_id;
        res.response_status := r.response_status;
        res.response_headers := r.response_headers;
        res.response_body := r.response_body;
      ELSIF v_decision = 'mismatch' THEN
        res.outcome := 'mismatch';
      ELSE
        res.outcome := 'in_progress';
        res.retry_after := idem._retry_after();
      END IF;
      -- A read-only transaction (a standby) still gets its answer, without the audit row it
      -- cannot write: a refusal executes nothing, so no mutation goes unlogged.
      IF (res.outcome <> 'replay' OR current_setting('idem.audit_replays')::boolean)
         AND NOT current_setting('transaction_read_only')::boolean THEN
        PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, r.generation, NULL, p_mutation_type,
                            res.outcome, false, r.order_id, NULL, NULL, NULL, NULL,
                            coalesce(r.attempts_in_generation, 0), v_now, NULL);
      END IF;
      RETURN res;
    END IF;

    -- The decision writes: take the key's lock without waiting, then read again under it (READ
    -- COMMITTED sees what the last writer committed). An absent row goes straight to the insert,
    -- whose ON CONFLICT notices a row committed in between.
    IF NOT v_locked THEN
      IF idem._try_lock_key(v_lock) THEN
        v_locked := true;
        IF v_found THEN CONTINUE; END IF;
      ELSIF v_wait AND idem._wait_for_key_lock(v_lock, v_deadline) THEN
        CONTINUE;  -- the writer's transaction ended: see what it left
      ELSE
        -- Another transaction is writing this key (its row may not even be visible to us yet).
        res.outcome := 'in_progress';
        res.generation := r.generation;
        res.retry_after := idem._retry_after();
        IF NOT current_setting('transaction_read_only')::boolean THEN
          PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, r.generation, NULL, p_mutation_type,
                              'in_progress', false, NULL, NULL, NULL, NULL, NULL,
                              coalesce(r.attempts_in_generation, 0), clock_timestamp(), NULL);
        END IF;
        RETURN res;
      END IF;
    END IF;

    -- An existing row is locked before it is written, without waiting: under the key's lock only
    -- purge_expired can hold it (it is deleting a record that became history). Once locked it is
    -- written, so a refusal never follows a row lock.
    IF v_decision <> 'insert' THEN
      PERFORM 1 FROM idem.keys k WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest
         FOR NO KEY UPDATE SKIP LOCKED;
      IF NOT FOUND THEN
        PERFORM 1 FROM idem.keys k WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest;
        IF NOT FOUND THEN CONTINUE; END IF;  -- purged meanwhile: decide again (an insert)
        PERFORM idem._unlock_key(v_lock);
        res.outcome := 'in_progress';
        res.generation := r.generation;
        res.retry_after := idem._retry_after();
        IF NOT current_setting('transaction_read_only')::boolean THEN
          PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, r.generation, NULL, p_mutation_type,
                              'in_progress', false, NULL, NULL, NULL, NULL, NULL,
                              coalesce(r.attempts_in_generation, 0), clock_timestamp(), NULL);
        END IF;
        RETURN res;
      END IF;
    END IF;

    IF v_decision = 'insert' THEN
      v_retired := coalesce((SELECT g.generation FROM idem.retired_keys g
                              WHERE g.tenant_id = p_tenant COLLATE "C" AND g.scope_digest = p_digest), 0);
      -- A snapshot older than a purge of this key would start an old generation again (its
      -- record is gone, so the insert meets no conflict): refuse it as PostgreSQL refuses any
      -- write such a snapshot cannot see the result of.
      IF current_setting('transaction_isolation') <> 'read committed'
         AND idem._retired_generation_now(p_tenant, p_digest) <> v_retired THEN
        RAISE EXCEPTION 'could not serialize acquisition of an idempotency key: it was purged after this transaction''s snapshot'
          USING ERRCODE = 'serialization_failure', HINT = 'Retry the transaction.';
      END IF;
      INSERT INTO idem.keys AS k (tenant_id, scope_digest, status, attempt, generation, payload_hash,
                                  hash_scheme, caller_id, resource, client_key, lease_interval, ttl,
                                  lease_expires_at, created_at, expires_at, mutation_type, attempted_at,
                                  attempts_in_generation, lease_secret_hash)
      VALUES (p_tenant, p_digest, 'in_progress', nextval('idem.fencing_token_seq'), 1 + v_retired,
              p_hash, idem.fingerprint_scheme(), p_caller, p_resource, p_key, v_lease, v_ttl,
              v_now + v_lease, v_now, v_now + v_lease + v_ttl, p_mutation_type, v_now, 1,
              sha256(convert_to(v_secret, 'UTF8')))
      ON CONFLICT DO NOTHING
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN
        -- A row committed after our read. READ COMMITTED: read it and decide again (still holding
        -- the lock, given back if the decision refuses). An older snapshot cannot see it: 40001.
        IF current_setting('transaction_isolation') = 'read committed' THEN CONTINUE; END IF;
        RAISE EXCEPTION 'could not serialize acquisition of an idempotency key: another transaction created it'
          USING ERRCODE = 'serialization_failure', HINT = 'Retry the transaction.';
      END IF;
      res.outcome := 'acquired';
    ELSIF v_decision = 'resume' THEN
      -- Take over at the last recovery point with a new fencing token; the handler verifies the
      -- side effect the recovery point names before repeating anything.
      UPDATE idem.keys k SET status = 'in_progress', attempt = nextval('idem.fencing_token_seq'),
             lease_interval = v_lease, ttl = v_ttl, lease_expires_at = v_now + v_lease,
             expires_at = CASE WHEN k.recovery_point IS NULL THEN v_now + v_lease + v_ttl END,
             attempted_at = v_now, attempts_in_generation = k.attempts_in_generation + 1,
             lease_secret_hash = sha256(convert_to(v_secret, 'UTF8')),
             -- The attempt taken over may have called the handler: its payload stays the key's.
             payload_pinned = k.payload_pinned OR k.status = 'in_progress'
       WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.recovery_point, k.recovery_data, k.lease_expires_at
           INTO res.attempt, res.generation, res.recovery_point, res.recovery_data, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'resumed';
    ELSE
      -- new_generation: the record is history. fresh_attempt: released before any checkpoint
      -- (its payload_pinned stays: the decision let only the pinned payload through).
      UPDATE idem.keys k SET
          status = 'in_progress', attempt = nextval('idem.fencing_token_seq'),
          generation = k.generation + CASE WHEN v_decision = 'new_generation' THEN 1 ELSE 0 END,
          payload_hash = p_hash, hash_scheme = idem.fingerprint_scheme(), caller_id = p_caller,
          resource = p_resource, client_key = p_key, lease_interval = v_lease, ttl = v_ttl,
          lease_expires_at = v_now + v_lease, recovery_point = NULL, recovery_data = NULL,
          response_status = NULL, response_headers = NULL, response_body = NULL, order_id = NULL,
          handler_response = NULL, last_error = NULL,
          created_at = CASE WHEN v_decision = 'new_generation' THEN v_now ELSE k.created_at END,
          resolved_at = NULL, expires_at = v_now + v_lease + v_ttl, mutation_type = p_mutation_type,
          local_status = NULL, attempted_at = v_now,
          attempts_in_generation = CASE WHEN v_decision = 'new_generation' THEN 1 ELSE k.attempts_in_generation + 1 END,
          lease_secret_hash = sha256(convert_to(v_secret, 'UTF8')),
          payload_pinned = v_decision <> 'new_generation' AND k.payload_pinned
       WHERE k.tenant_id = p_tenant COLLATE "C" AND k.scope_digest = p_digest AND k.attempt = r.attempt
      RETURNING k.attempt, k.generation, k.lease_expires_at INTO res.attempt, res.generation, res.lease_expires_at;
      IF NOT FOUND THEN CONTINUE; END IF;
      res.outcome := 'acquired';
    END IF;
    -- A lease that ran out without complete or release: its attempt goes on the record now, in
    -- this transaction (a holder that called the processor and died leaves a trace).
    IF v_found AND r.status = 'in_progress' THEN
      PERFORM idem._audit_abandoned(p_tenant, p_digest, r.client_key, r.caller_id, r.resource, r.generation,
                                    r.attempt, r.mutation_type, r.recovery_point, r.recovery_data,
                                    r.attempts_in_generation, coalesce(r.attempted_at, r.created_at),
                                    r.lease_expires_at, res.attempt);
    END IF;
    -- The holder's handle carries the lease's secret (core/keys/handle.hpp); the record keeps
    -- only its SHA-256, so neither auditors nor a guessed fencing token can use the lease.
    res.handle := res.handle || ':' || v_secret;
    res.handler_key := idem._handler_key(p_digest, res.generation);
    RETURN res;
  END LOOP;
END $$;

-- The superseded attempt's audit row: outcome abandoned, its lease end as completed_at, its last
-- recovery point and data; handler_called true when one of its checkpoints said the handler ran,
-- else unknown (it may have called the processor after its last checkpoint).
CREATE FUNCTION idem._audit_abandoned(p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text,
                                      p_generation integer, p_attempt bigint, p_type text, p_recovery_point text,
                                      p_recovery_data jsonb, p_retry_count integer, p_attempted_at timestamptz,
                                      p_lease_end timestamptz, p_by_attempt bigint)
  RETURNS void
  LANGUAGE plpgsql
  SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, p_generation, p_attempt, p_type,
                      'abandoned',
                      (SELECT true FROM idem.mutations m
                        WHERE m.tenant_id = p_tenant COLLATE "C" AND m.client_key = p_key COLLATE "C"
                          AND m.attempted_at >= p_attempted_at AND m.scope_digest = p_digest
                          AND m.attempt = p_attempt AND m.outcome = 'checkpoint' AND m.handler_called
                        LIMIT 1),
                      NULL, p_recovery_data, NULL,
                      format('lease ran out at %s; taken over by attempt %s', p_lease_end, p_by_attempt),
                      p_recovery_point, p_retry_count, p_attempted_at, p_lease_end);
END $$;
REVOKE ALL ON FUNCTION idem._audit_abandoned(text, bytea, text, text, text, integer, bigint, text, text, jsonb,
                                             integer, timestamptz, timestamptz, bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION idem.release(handle text, attempt bigint, error text DEFAULT NULL,
                                        handler_called boolean DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.keys;
  v_now timestamptz;
BEGIN
  r := idem._holder_row(handle, attempt, 'release');
  v_now := clock_timestamp();
  -- Released before a checkpoint: history after the TTL, a fresh attempt until then. Released
  -- after one: it resumes at that checkpoint, and is never purged. Unless the holder says the
  -- handler was not called, the processor may hold a charge under this generation's key: the
  -- next attempt must carry the same payload.
  UPDATE idem.keys k SET status = 'released', last_error = error, lease_expires_at = NULL,
         expires_at = CASE WHEN k.recovery_point IS NULL THEN v_now + k.ttl END,
         payload_pinned = k.payload_pinned OR handler_called IS NOT FALSE
   WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  -- After a checkpoint the handler was called, unless told (the checkpoint recorded what it
  -- did); before one, NULL: nobody knows.
  PERFORM idem._audit_holder(r, 'released', CASE WHEN r.recovery_point IS NOT NULL THEN coalesce(handler_called, true)
                                                 ELSE handler_called END,
                             NULL, NULL, NULL, error, v_now);
END $$;

-- Executions: attempts that called the handler, or may have (released or abandoned without
-- saying it was not called: uncertain). Every attempt of a generation sends the processor the
-- same key, so an uncertain attempt beside a recorded charge is that charge when the processor
-- honoured the key; a generation is listed for uncertain attempts when two or more may have
-- charged and no charge is recorded: processor_key says where to look.
DROP FUNCTION idem.double_charges(timestamptz);
CREATE FUNCTION idem.double_charges(since timestamptz DEFAULT now() - interval '24 hours')
  RETURNS TABLE (tenant_id text, client_key text, caller_id text, resource text, generation integer,
                 executions bigint, uncertain bigint, order_ids text[], charge_ids text[], processor_key text,
                 first_attempt timestamptz, last_attempt timestamptz)
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pg_temp AS $$
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
   ORDER BY min(m.attempted_at) $$;
COMMENT ON FUNCTION idem.double_charges(timestamptz) IS
  'Keys whose generation executed more than once, or made more than one order or charge: possible double charges, with the processor key to look up.';
REVOKE ALL ON FUNCTION idem.double_charges(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.double_charges(timestamptz) TO idem_auditor, idem_operator;
GRANT EXECUTE ON FUNCTION idem._handler_key(bytea, integer) TO idem_auditor, idem_operator;

-- ==== 0.3.5: consumers bound to roles, the stuck-work path (issue 20.6, 20.7) ====
--
-- * Roles can be bound to outbox consumers (idem.bind_consumer / idem.unbind_consumer, by an
--   unbound operator). A session whose login role is, or is a member of, a bound role acts only
--   for those consumers: claim, ack, nack, consume_once (and an operator's outbox_replay,
--   outbox_discard, create_consumer) for another consumer raise ERR_CONSUMER_FORBIDDEN before
--   anything is read or written. Unbound roles (and superusers) act for every consumer, as before.
--   With no binding at all, the check costs no SQL: whether one exists is cached per backend, as
--   for tenant bindings (extension/binding_cache.cpp).
-- * idem.stuck_leases shows every unresolved attempt, a live lease too (the runbook sends the
--   operator there while a dead holder's lease still runs), with its age, the processor's key
--   (handler_key) and whether it is overdue.
-- * idem.retry_stuck(handle, attempt, reason) (operator, logged in idem.operator_actions): ends
--   the lease now, so the service's next request with the key resumes at the recovery point and
--   finishes the work itself (its order, its event), instead of an operator typing a response.

-- ---------------------------------------------------------------------------------------------
-- Consumer binding.

-- By role oid, as idem.tenant_bindings: a renamed role keeps its bindings, a role dropped and
-- created again under the same name does not inherit them.
CREATE TABLE idem.consumer_bindings (
  role_oid   oid NOT NULL,
  consumer   text COLLATE "C" NOT NULL,
  bound_by   name NOT NULL,
  bound_at   timestamptz NOT NULL,
  PRIMARY KEY (role_oid, consumer)
);
COMMENT ON TABLE idem.consumer_bindings IS
  'Roles (role_oid::regrole) bound to outbox consumers: a session whose login role is, or is a member of, a bound role claims, acks, nacks and consume_once''s only for those consumers.';
ALTER TABLE idem.consumer_bindings ENABLE ROW LEVEL SECURITY;
ALTER TABLE idem.consumer_bindings FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON idem.consumer_bindings TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY read_all ON idem.consumer_bindings FOR SELECT TO idem_auditor, idem_operator USING (true);
REVOKE ALL ON idem.consumer_bindings FROM PUBLIC;
GRANT SELECT ON idem.consumer_bindings TO idem_auditor, idem_operator;

-- Whether any consumer binding exists, cached per backend and forgotten when the table changes
-- (the triggers below): the outbox's calls read no table while nobody is bound.
CREATE FUNCTION idem._consumer_bindings_exist() RETURNS boolean
  AS 'MODULE_PATHNAME', 'idem_consumer_bindings_exist'
  LANGUAGE C STABLE;
REVOKE ALL ON FUNCTION idem._consumer_bindings_exist() FROM PUBLIC;
COMMENT ON FUNCTION idem._consumer_bindings_exist() IS
  'Whether idem.consumer_bindings holds any row (cached per backend, read under the latest snapshot, forgotten when the table changes).';

CREATE FUNCTION idem._consumer_bindings_changed() RETURNS trigger
  AS 'MODULE_PATHNAME', 'idem_consumer_bindings_changed' LANGUAGE C;
REVOKE ALL ON FUNCTION idem._consumer_bindings_changed() FROM PUBLIC;
COMMENT ON FUNCTION idem._consumer_bindings_changed() IS
  'Trigger of idem.consumer_bindings: every backend forgets its cached "no bindings" when they change.';
CREATE TRIGGER consumer_bindings_changed AFTER INSERT OR UPDATE OR DELETE ON idem.consumer_bindings
  FOR EACH STATEMENT EXECUTE FUNCTION idem._consumer_bindings_changed();
CREATE TRIGGER consumer_bindings_truncated AFTER TRUNCATE ON idem.consumer_bindings
  FOR EACH STATEMENT EXECUTE FUNCTION idem._consumer_bindings_changed();
ALTER TABLE idem.consumer_bindings ENABLE ALWAYS TRIGGER consumer_bindings_changed;
ALTER TABLE idem.consumer_bindings ENABLE ALWAYS TRIGGER consumer_bindings_truncated;

-- The consumers the session is bound to, or NULL when it is unbound (no binding applies to its
-- login role, or it is a superuser). session_user, as for tenants: a binding is about who logged in.
CREATE FUNCTION idem._session_consumers() RETURNS text[]
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN r.rolsuper THEN NULL
              ELSE (SELECT array_agg(DISTINCT b.consumer ORDER BY b.consumer) FROM idem.consumer_bindings b
                      JOIN pg_catalog.pg_roles br ON br.oid = b.role_oid
                     WHERE pg_catalog.pg_has_role(r.oid, br.oid, 'MEMBER')) END
    FROM pg_catalog.pg_roles r WHERE r.rolname = session_user $$;
REVOKE ALL ON FUNCTION idem._session_consumers() FROM PUBLIC;

CREATE FUNCTION idem._require_consumer(p_consumer text) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_bound text[];
BEGIN
  IF NOT idem._consumer_bindings_exist() THEN RETURN; END IF;  -- nobody is bound: no SQL
  v_bound := idem._session_consumers();
  IF v_bound IS NOT NULL AND NOT coalesce(p_consumer = ANY (v_bound), false) THEN
    PERFORM idem._raise('ERR_CONSUMER_FORBIDDEN',
      format('role %s is bound to consumers %s, not %s', session_user,
             array_to_string(v_bound, ', '), coalesce(quote_literal(p_consumer), 'NULL')),
      'An operator binds roles to consumers with idem.bind_consumer(role, consumer); act only for your own consumers.');
  END IF;
END $$;
REVOKE ALL ON FUNCTION idem._require_consumer(text) FROM PUBLIC;
COMMENT ON FUNCTION idem._require_consumer(text) IS
  'ERR_CONSUMER_FORBIDDEN unless the session is unbound or bound to consumer.';

-- Every outbox call that names a consumer reads it here first: the binding is checked before the
-- consumer is even looked up, so a bound role learns nothing about other consumers.
CREATE OR REPLACE FUNCTION idem._outbox_consumer(p_consumer text) RETURNS idem.outbox_consumers
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.outbox_consumers;
BEGIN
  IF idem._consumer_bindings_exist() THEN
    PERFORM idem._require_consumer(p_consumer);
  END IF;
  SELECT * INTO r FROM idem.outbox_consumers c WHERE c.consumer = p_consumer;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_OUTBOX_CONSUMER_UNKNOWN', format('no outbox consumer %s', coalesce(quote_literal(p_consumer), 'NULL')),
      'Register it once with idem.create_consumer(consumer, topics).');
  END IF;
  RETURN r;
END $$;

-- Consumers see every tenant's events of their topics, so binding one is an act on every tenant:
-- only a session bound neither to tenants nor to consumers manages consumer bindings.
CREATE FUNCTION idem._require_manages_consumer_bindings(p_action text) RETURNS void
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM idem._require_unbound(p_action);
  IF idem._consumer_bindings_exist() AND idem._session_consumers() IS NOT NULL THEN
    PERFORM idem._raise('ERR_CONSUMER_FORBIDDEN',
      format('role %s is bound to consumers %s; %s is for an unbound operator', session_user,
             array_to_string(idem._session_consumers(), ', '), p_action),
      'Run it from an operator role bound to no tenant and no consumer.');
  END IF;
END $$;
REVOKE ALL ON FUNCTION idem._require_manages_consumer_bindings(text) FROM PUBLIC;

CREATE FUNCTION idem.bind_consumer(role name, consumer text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  PERFORM idem._require_manages_consumer_bindings('bind_consumer');
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  -- A binding to a consumer that does not exist would leave the role acting for nothing.
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_consumers c WHERE c.consumer = bind_consumer.consumer) THEN
    PERFORM idem._raise('ERR_OUTBOX_CONSUMER_UNKNOWN', format('no outbox consumer %s', coalesce(quote_literal(consumer), 'NULL')),
      'Register it first with idem.create_consumer(consumer, topics).');
  END IF;
  INSERT INTO idem.consumer_bindings (role_oid, consumer, bound_by, bound_at)
    VALUES (v_role, consumer, session_user, clock_timestamp()) ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $$;
REVOKE ALL ON FUNCTION idem.bind_consumer(name, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.bind_consumer(name, text) TO idem_operator;
COMMENT ON FUNCTION idem.bind_consumer(name, text) IS
  'Binds role to an outbox consumer (true; false when it already was): sessions of that role, or of its members, claim, ack, nack and consume_once only for their bound consumers.';

CREATE FUNCTION idem.unbind_consumer(role name, consumer text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  PERFORM idem._require_manages_consumer_bindings('unbind_consumer');
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  DELETE FROM idem.consumer_bindings b WHERE b.role_oid = v_role AND b.consumer = unbind_consumer.consumer COLLATE "C";
  RETURN FOUND;
END $$;
REVOKE ALL ON FUNCTION idem.unbind_consumer(name, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.unbind_consumer(name, text) TO idem_operator;
COMMENT ON FUNCTION idem.unbind_consumer(name, text) IS
  'Removes one consumer binding (true when there was one). A role left with no consumer binding acts for every consumer again.';

-- A bound operator adds topics only to its own consumers (a new topic is every tenant's events).
CREATE OR REPLACE FUNCTION idem.create_consumer(consumer text, topics text[], max_attempts integer DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_missing text;
BEGIN
  PERFORM idem._require_consumer(consumer);
  PERFORM idem._require_flat_array(topics, 'topics');
  IF consumer IS NULL OR consumer !~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('consumer %s is not a consumer name: 1-200 of A-Z a-z 0-9 . _ : -, starting with a letter or digit', coalesce(quote_literal(consumer), 'NULL')));
  END IF;
  IF topics IS NULL OR cardinality(topics) = 0 OR array_position(topics, NULL) IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'topics must be a non-empty array without NULLs');
  END IF;
  IF max_attempts IS NOT NULL AND max_attempts NOT BETWEEN 1 AND 1000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('max_attempts must be 1..1000, got %s', coalesce(max_attempts::text, 'NULL')));
  END IF;
  SELECT t INTO v_missing FROM unnest(topics) AS t
   WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_topics o WHERE o.topic = t) LIMIT 1;
  IF v_missing IS NOT NULL THEN
    PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN', format('no outbox topic %L', v_missing),
      'Create it first: SELECT idem.create_topic(''' || v_missing || ''');');
  END IF;
  -- A new consumer gets 5 attempts unless told; an existing one keeps its own unless told.
  INSERT INTO idem.outbox_consumers AS c (consumer, max_attempts)
    VALUES (create_consumer.consumer, coalesce(create_consumer.max_attempts, 5))
    ON CONFLICT ON CONSTRAINT outbox_consumers_pkey
    DO UPDATE SET max_attempts = coalesce(create_consumer.max_attempts, c.max_attempts);
  INSERT INTO idem.outbox_subscriptions (consumer, topic)
    SELECT DISTINCT create_consumer.consumer, t FROM unnest(topics) AS t
    ON CONFLICT DO NOTHING;
END $$;

-- ---------------------------------------------------------------------------------------------
-- The stuck-work path: every unresolved attempt in idem.stuck_leases, and idem.retry_stuck.

-- The processor's key (the Idempotency-Key the service sent to the processor for this
-- generation) is what an operator looks a stuck charge up by: auditors and operators compute it
-- in the view, as they compute the handle; no service or consumer role may.
GRANT EXECUTE ON FUNCTION idem._handler_key(bytea, integer) TO idem_auditor, idem_operator;

-- Every unresolved attempt: in progress (a live lease too: the runbook sends the operator here
-- while a dead holder's lease still runs, 30 s by default), or released after a checkpoint.
-- Columns are only added at the end (CREATE OR REPLACE VIEW); it reads idem.keys as its owner
-- and filters for the reader; security_barrier as before.
CREATE OR REPLACE VIEW idem.stuck_leases WITH (security_barrier = true) AS
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

-- operator_actions logs retry_stuck too; a retry records no response.
ALTER TABLE idem.operator_actions DROP CONSTRAINT operator_actions_action_check;
ALTER TABLE idem.operator_actions ADD CONSTRAINT operator_actions_action_check
  CHECK (action IN ('resolve_stuck', 'retry_stuck'));
ALTER TABLE idem.operator_actions ALTER COLUMN response_status DROP NOT NULL;
ALTER TABLE idem.operator_actions ADD CONSTRAINT operator_actions_response_check
  CHECK (action <> 'resolve_stuck' OR response_status IS NOT NULL);

CREATE FUNCTION idem.retry_stuck(handle text, attempt bigint DEFAULT NULL, reason text DEFAULT NULL)
  RETURNS TABLE (retried_attempt bigint, status text, recovery_point text, resumable_at timestamptz)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_tenant text := idem._handle_tenant(handle);
  v_digest bytea := idem._handle_digest(handle);
  r idem.keys;
  v_now timestamptz;
  v_until timestamptz;
BEGIN
  -- The tenant is checked before anything is read: another tenant's record is not even probed.
  -- Messages name the record, never a secret.
  PERFORM idem._require_tenant(v_tenant);
  handle := idem._handle(v_tenant, v_digest);
  -- resolve_stuck's discipline: the key's lock without waiting (its holder completing or a request
  -- acquiring it holds it for a moment), then the row without waiting (under the key's lock only
  -- purge_expired could hold it). The lock is kept to the end of the transaction: until this
  -- commits, a request for the key gets in_progress and the holder's own calls wait (bounded).
  IF NOT idem._try_lock_key(idem._lock_key(v_digest)) THEN
    PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS', format('key %s is being written right now', handle),
      'Look at idem.stuck_leases again in a moment: idem.retry_stuck never waits.');
  END IF;
  BEGIN
    SELECT * INTO r FROM idem.keys k WHERE k.tenant_id = v_tenant COLLATE "C" AND k.scope_digest = v_digest
       FOR NO KEY UPDATE NOWAIT;
  EXCEPTION WHEN lock_not_available THEN
    PERFORM idem._raise('ERR_IDEMPOTENCY_IN_PROGRESS', format('key %s is being purged or written right now', handle),
      'Look at idem.stuck_leases again in a moment: idem.retry_stuck never waits.');
  END;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: there is no such record (never acquired, or expired and purged)', handle),
      'Take handle and attempt from idem.stuck_leases.');
  END IF;
  v_now := clock_timestamp();
  IF retry_stuck.attempt IS NOT NULL AND r.attempt <> retry_stuck.attempt THEN
    PERFORM idem._raise('ERR_LEASE_LOST',
      format('key %s moved on from attempt %s to attempt %s (%s)', handle, retry_stuck.attempt, r.attempt, r.status),
      'Look at idem.stuck_leases again before retrying it.');
  END IF;
  IF r.status = 'resolved' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: it was resolved at %s and replays its response', handle, r.resolved_at),
      'Nothing to retry; idem.key_history shows what happened.');
  END IF;
  IF r.status = 'released' AND r.recovery_point IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: it was released before any checkpoint, and its next request is a fresh attempt', handle),
      'Only unfinished work with a checkpoint, or an attempt in progress, needs an operator.');
  END IF;
  IF r.expires_at <= v_now THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('key %s is not stuck: its record expired at %s, and its next request starts a new generation', handle, r.expires_at),
      'Nothing to retry: an expired record is history.');
  END IF;
  -- In progress: the lease ends now (or stays ended), so the next request with the key resumes
  -- at the recovery point with a new fencing token, and the old holder's calls get ERR_LEASE_LOST
  -- once it has. Until then a holder that is alive after all may still checkpoint (which leases
  -- it again) or complete: nothing runs twice either way. Released after a checkpoint: it
  -- resumes already; the call is only logged.
  IF r.status = 'in_progress' THEN
    v_until := least(r.lease_expires_at, v_now);
    UPDATE idem.keys k SET lease_expires_at = v_until
     WHERE k.tenant_id = r.tenant_id AND k.scope_digest = r.scope_digest;
  END IF;
  INSERT INTO idem.operator_actions (tenant_id, scope_digest, action, attempt, generation, recovery_point,
                                     recovery_data, response_status, reason, performed_by, performed_at)
  VALUES (r.tenant_id, r.scope_digest, 'retry_stuck', r.attempt, r.generation, r.recovery_point,
          r.recovery_data, NULL, coalesce(nullif(btrim(reason), ''), 'lease ended for the service to resume'),
          session_user, v_now);
  retried_attempt := r.attempt;
  status := r.status;
  recovery_point := r.recovery_point;
  resumable_at := coalesce(v_until, v_now);
  RETURN NEXT;
END $$;
REVOKE ALL ON FUNCTION idem.retry_stuck(text, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.retry_stuck(text, bigint, text) TO idem_operator;
COMMENT ON FUNCTION idem.retry_stuck(text, bigint, text) IS
  'Operator: ends the lease of unfinished work now, so the service''s next request with the key resumes at its recovery point and finishes it (logged in idem.operator_actions). Refuses records that are not stuck; never waits.';

-- ==== end 20.6/20.7 ====
