CREATE OR REPLACE FUNCTION idem.seal_audit(batch integer DEFAULT 10000, wait interval DEFAULT '2 seconds'::interval)
 RETURNS TABLE(seal_id bigint, first_id bigint, last_id bigint, row_count bigint, head text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_prev idem.audit_seals;
  v_seal idem.audit_seals;
  v_drawn bigint;
  v_timeout text := current_setting('lock_timeout');
BEGIN
  PERFORM idem._require_unbound('seal_audit');
  IF batch IS NULL OR batch < 1 OR batch > 1000000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..1000000, got %s', coalesce(batch::text, 'NULL')),
      'Call seal_audit repeatedly until it returns no row.');
  END IF;
  IF wait IS NULL OR idem._elapsed(wait) > interval '1 minute' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('wait must be positive and at most 1 minute, got %s', coalesce(wait::text, 'NULL')),
      'Audit writers queue behind a seal that waits: keep the wait short and run the seal again.');
  END IF;
  -- Each statement below must see what committed before it (the previous seal, once its lock is
  -- ours; every row of the range, once the trail's is): a REPEATABLE READ snapshot would seal
  -- again what a concurrent seal sealed.
  IF current_setting('transaction_read_only') = 'on' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'seal_audit writes: not in a read-only transaction');
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'seal_audit runs in READ COMMITTED',
      'Call it as a statement of its own (a scheduled job), not inside a REPEATABLE READ or SERIALIZABLE transaction.');
  END IF;
  -- One sealer at a time; readers of the seals go on.
  LOCK TABLE idem.audit_seals IN EXCLUSIVE MODE;
  SELECT * INTO v_prev FROM idem.audit_seals s ORDER BY s.seal_id DESC LIMIT 1;
  -- No id drawn since the last seal: nothing to seal, and no reason to hold writers off.
  IF (SELECT CASE WHEN q.is_called THEN q.last_value ELSE q.last_value - 1 END FROM idem.mutations_mutation_id_seq q)
     <= coalesce(v_prev.last_id, 0) THEN
    RETURN;
  END IF;
  -- Every id drawn before this lock belongs to a row that has committed or never will: SHARE
  -- waits for each transaction that wrote to the trail and holds new writers off until this
  -- transaction ends. So the range sealed has no late rows, and a row that turns up in it later
  -- was inserted after its seal. Writers wait for the seal: behind a long transaction it gives up.
  -- At least 1 ms: a lock_timeout of 0 would wait for ever.
  PERFORM set_config('lock_timeout', greatest(1, ceil(extract(epoch FROM idem._elapsed(wait)) * 1000))::bigint::text, true);
  BEGIN
    LOCK TABLE idem.mutations IN SHARE MODE;
  EXCEPTION WHEN lock_not_available THEN
    PERFORM set_config('lock_timeout', v_timeout, true);
    RAISE NOTICE 'seal_audit: a transaction held the audit trail for longer than %; nothing sealed, run it again', wait;
    RETURN;
  END;
  PERFORM set_config('lock_timeout', v_timeout, true);
  SELECT CASE WHEN q.is_called THEN q.last_value ELSE q.last_value - 1 END INTO v_drawn FROM idem.mutations_mutation_id_seq q;
  v_seal.seal_id := coalesce(v_prev.seal_id, 0) + 1;
  v_seal.first_id := coalesce(v_prev.last_id, 0) + 1;
  v_seal.last_id := least(v_drawn, v_seal.first_id - 1 + batch);
  IF v_seal.last_id < v_seal.first_id THEN RETURN; END IF;  -- nothing written since the last seal
  INSERT INTO idem.audit_leaves (tenant_id, mutation_id, seal_id, attempted_at, row_hash)
  SELECT m.tenant_id, m.mutation_id, v_seal.seal_id, m.attempted_at, idem._audit_row_hash(m)
    FROM idem.mutations m WHERE m.mutation_id BETWEEN v_seal.first_id AND v_seal.last_id;
  GET DIAGNOSTICS v_seal.row_count = ROW_COUNT;
  SELECT idem._merkle_root(array_agg(idem._audit_leaf(l) ORDER BY l.mutation_id, l.tenant_id)) INTO v_seal.root
    FROM idem.audit_leaves l WHERE l.seal_id = v_seal.seal_id;
  v_seal.sealed_at := clock_timestamp();
  v_seal.previous_head := v_prev.head;
  v_seal.head := idem._audit_seal_head(v_seal);
  INSERT INTO idem.audit_seals SELECT v_seal.*;
  RETURN QUERY SELECT v_seal.seal_id, v_seal.first_id, v_seal.last_id, v_seal.row_count, encode(v_seal.head, 'hex');
END $function$
;
COMMENT ON FUNCTION idem.seal_audit(integer,interval) IS 'Seals the audit rows written since the last seal (up to batch ids): their Merkle root, chained to the previous seal''s head. Waits at most wait for audit writers in flight, which wait for it. Returns the seal, or no row (nothing new, or busy: run again).';
REVOKE ALL ON FUNCTION idem.seal_audit(integer,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.seal_audit(integer,interval) TO idem_operator;
