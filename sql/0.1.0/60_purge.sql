-- Retention: expired records leave in small batches. SKIP LOCKED passes over any row an acquirer
-- is working on, and each batch is its own short statement, so purge never stalls the hot path.

CREATE FUNCTION idem.purge_expired(batch integer DEFAULT 1000)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_removed integer;
BEGIN
  IF batch IS NULL OR batch < 1 OR batch > 100000 THEN
    RAISE EXCEPTION 'ERR_ARGUMENT_INVALID: batch must be 1..100000, got %', coalesce(batch::text, 'NULL')
      USING ERRCODE = 'IK012', HINT = 'Call purge_expired repeatedly with a small batch until it returns 0.';
  END IF;
  WITH victims AS (
    SELECT k.tenant_id, k.scope_digest FROM idem.keys k
     WHERE k.expires_at < clock_timestamp()
     ORDER BY k.expires_at
     LIMIT batch
       FOR UPDATE SKIP LOCKED
  )
  DELETE FROM idem.keys k USING victims v
   WHERE k.tenant_id = v.tenant_id AND k.scope_digest = v.scope_digest;
  GET DIAGNOSTICS v_removed = ROW_COUNT;
  RETURN v_removed;
END $$;
COMMENT ON FUNCTION idem.purge_expired(integer) IS
  'Delete up to batch expired records (resolved or released, past expires_at); returns how many. Call until 0.';
