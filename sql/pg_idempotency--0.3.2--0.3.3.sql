-- pg_idempotency 0.3.2 -> 0.3.3: purge_expired deletes a batch in one statement, and its scans
-- stop where the due records end (issue 11, "a purge that removes >= 20,000 expired records per
-- second without raising acquire's p99"; docs/hot-path.md, "The purge").
--
-- 0.3.2's scans compared with clock_timestamp(), which no index can use as a bound: whenever
-- fewer than a batch were due (a purge that keeps up), a call read every entry of the purge
-- index, i.e. the whole store, and its pass over idem.retired_keys read every generation
-- remembered (24 ms a call at 150,000).
--
-- 0.3.2 ran a DELETE and an INSERT ... ON CONFLICT into idem.retired_keys per record, each with
-- the executor's per-statement set-up (30 us a record). Now one statement takes the candidates'
-- key locks, in purge_after order, and one more deletes every locked record that is still
-- history and raises their retired generations. What a call does is
-- unchanged: the same candidates in the same order, keys in use passed over and not counted, a
-- record rechecked under its key's lock by a statement that starts after the lock was taken, the
-- locks of records that were no longer history given back (after the round's DELETE rather than
-- right after each record's). At most 500 keys stay locked per call, now counting the pass that
-- forgets old generations (0.3.2 could keep 500 more there, and kept a lock when that pass found
-- nothing to forget).
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.3.3'" to load this file. \quit

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
    SELECT coalesce(array_agg(x.tenant_id), '{}'), coalesce(array_agg(x.scope_digest), '{}')
      INTO v_tenants, v_digests
      FROM (SELECT s.tenant_id, s.scope_digest
              FROM (SELECT k.tenant_id, k.scope_digest FROM idem.keys k
                     WHERE k.purge_after < v_now AND k.expires_at < v_now AND k.scope_digest <> ALL (v_passed)
                     ORDER BY k.purge_after OFFSET 0) s
             WHERE CASE WHEN idem._key_locked_by_me(idem._lock_key(s.scope_digest)) THEN false
                        ELSE idem._try_lock_key(idem._lock_key(s.scope_digest)) END
             LIMIT v_round) x;
    EXIT WHEN cardinality(v_digests) = 0;
    -- Under the keys' locks nobody else writes these rows, and this statement starts after every
    -- lock was taken: it reads their latest committed versions and deletes those still history,
    -- raising their retired generations; it never waits.
    WITH gone AS (
      DELETE FROM idem.keys k
       USING unnest(v_tenants, v_digests) AS l(tenant_id, scope_digest)
       WHERE k.tenant_id = l.tenant_id COLLATE "C" AND k.scope_digest = l.scope_digest
         AND k.expires_at < clock_timestamp()
      RETURNING k.tenant_id, k.scope_digest, k.generation
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

-- ---------------------------------------------------------------------------------------------
-- purge_after is kept by the invariants trigger instead of a generation expression: PostgreSQL
-- parsed that expression from its stored text in every statement writing idem.keys (9 % of
-- acquire's time, 7 % of complete's). Same value, computed by the same functions in the same
-- order (extension/record_invariants.cpp); whoever writes a row, the trigger sets the column (an
-- explicit value is replaced). No rewrite: the stored values stay.
ALTER TABLE idem.keys ALTER COLUMN purge_after DROP EXPRESSION;
COMMENT ON COLUMN idem.keys.purge_after IS
  'When purge_expired starts looking at the record: attempted_at + ttl in elapsed time (never after expires_at), NULL when expires_at is NULL. Set by the trigger keys_invariants on every write; not moved by complete, whose UPDATE is HOT.';
