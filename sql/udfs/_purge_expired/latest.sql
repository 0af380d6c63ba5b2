CREATE OR REPLACE FUNCTION idem._purge_expired(p_tenant text, batch integer)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
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
  -- Where the records are: idem's tables, or on Citus one tenant's shards on this node, written
  -- as the fast path writes them (idem._tenant_tables holds Citus's shard lock against a move).
  v_tables   text[] := ARRAY['idem.keys', 'idem.retired_keys', 'idem.mutations'];
  v_only     text := '';    -- one tenant's purge: the tenant filter of each statement, $n to come
  v_audit_id text := '';    -- a shard lacks the audit identity: the id is drawn here
  v_id_value text := '';
  v_n        bigint;
BEGIN
  -- The public forms checked the caller (unbound for every tenant, bound to it for one).
  IF batch IS NULL OR batch < 1 OR batch > 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')),
      'Call purge_expired repeatedly with a small batch until it returns 0.');
  END IF;
  IF p_tenant IS NOT NULL THEN
    v_tables := idem._tenant_tables(p_tenant);
    v_only := ' AND k.tenant_id = $';
    IF v_tables[1] <> 'idem.keys' THEN
      v_audit_id := 'mutation_id, ';
      v_id_value := 'nextval(''idem.mutations_mutation_id_seq''), ';
    END IF;
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
    EXECUTE format($q$
      SELECT coalesce(array_agg(x.tenant_id), '{}'), coalesce(array_agg(x.scope_digest), '{}'), coalesce(array_agg(x.ctid), '{}')
        FROM (SELECT s.tenant_id, s.scope_digest, s.ctid
                FROM (SELECT k.tenant_id, k.scope_digest, k.ctid FROM %1$s k
                       WHERE k.purge_after < $1 AND k.expires_at < $1 AND k.scope_digest <> ALL ($2)%2$s
                       ORDER BY k.purge_after OFFSET 0) s
               WHERE CASE WHEN idem._key_locked_by_me(idem._lock_key(s.scope_digest)) THEN false
                          ELSE idem._try_lock_key(idem._lock_key(s.scope_digest)) END
               LIMIT $3) x$q$, v_tables[1], v_only || CASE WHEN v_only <> '' THEN '4' ELSE '' END)
      INTO v_tenants, v_digests, v_rows USING v_now, v_passed, v_round, p_tenant;
    EXIT WHEN cardinality(v_digests) = 0;
    -- Under the keys' locks nobody else writes these rows, and this statement starts after every
    -- lock was taken: it deletes those still history, raising their retired generations; it never
    -- waits. Each row is fetched where the scan read it (a TID scan, no primary-key probe: 0.3.3's
    -- probes were a quarter of the purge's time); the key is compared too, since a slot can hold
    -- another row by now. A version written after the scan's snapshot and before the lock is not
    -- visible at that place any more: the record is passed over like one that is no longer history (its lock goes
    -- back), and the next call finds it by purge_after again.
    EXECUTE format($q$
    WITH gone AS (
      DELETE FROM %1$s k
       USING unnest($1, $2, $3) AS l(tenant_id, scope_digest, row_at)
       WHERE k.ctid = l.row_at AND k.tenant_id = l.tenant_id AND k.scope_digest = l.scope_digest
         AND k.expires_at < clock_timestamp()%4$s
      RETURNING k.tenant_id, k.scope_digest, k.generation, k.status, k.attempt, k.client_key, k.caller_id,
                k.resource, k.mutation_type, k.attempts_in_generation, k.attempted_at, k.created_at,
                k.lease_expires_at
    ), abandoned AS (
      -- An attempt whose lease ran out and that nobody took over goes on the record as it leaves
      -- (it may have called the processor; a checkpointed one is never purged).
      INSERT INTO %3$s (%5$stenant_id, scope_digest, client_key, caller_id, resource, generation, attempt,
                                  mutation_type, outcome, handler_called, error_message, retry_count,
                                  attempted_at, completed_at)
      SELECT %6$sgone.tenant_id, gone.scope_digest, gone.client_key, gone.caller_id, gone.resource, gone.generation,
             gone.attempt, gone.mutation_type, 'abandoned', NULL,
             format('lease ran out at %%s; purged without a takeover', gone.lease_expires_at),
             gone.attempts_in_generation, coalesce(gone.attempted_at, gone.created_at), gone.lease_expires_at
        FROM gone WHERE gone.status = 'in_progress'
    ), retired AS (
      INSERT INTO %2$s AS g (tenant_id, scope_digest, generation, retired_at)
      SELECT gone.tenant_id, gone.scope_digest, gone.generation, clock_timestamp() FROM gone
      ON CONFLICT (tenant_id, scope_digest)
      DO UPDATE SET generation = greatest(g.generation, excluded.generation), retired_at = excluded.retired_at
      RETURNING g.scope_digest
    )
    SELECT coalesce(array_agg(r.scope_digest), '{}') FROM retired r$q$,
      v_tables[1], v_tables[2], v_tables[3], v_only || CASE WHEN v_only <> '' THEN '4' ELSE '' END, v_audit_id, v_id_value)
      INTO v_gone USING v_tenants, v_digests, v_rows, p_tenant;
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
  FOR c IN EXECUTE format($q$SELECT k.tenant_id, k.scope_digest FROM %1$s k
                              WHERE k.retired_at < $1%2$s
                              ORDER BY k.retired_at LIMIT $2$q$, v_tables[2], v_only || CASE WHEN v_only <> '' THEN '3' ELSE '' END)
             USING v_forget, least(batch, c_max_keys - v_removed), p_tenant LOOP
    v_lock := idem._lock_key(c.scope_digest);
    CONTINUE WHEN idem._key_locked_by_me(v_lock) OR NOT idem._try_lock_key(v_lock);
    EXECUTE format('DELETE FROM %s g WHERE g.tenant_id = $1 AND g.scope_digest = $2 AND g.retired_at < $3', v_tables[2])
      USING c.tenant_id, c.scope_digest, v_forget;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n = 0 THEN
      PERFORM idem._unlock_key(v_lock);  -- nothing forgotten: nothing to keep the lock for
    END IF;
  END LOOP;
  RETURN v_removed;
END $function$
;
COMMENT ON FUNCTION idem._purge_expired(text,integer) IS NULL;
REVOKE ALL ON FUNCTION idem._purge_expired(text,integer) FROM PUBLIC;
