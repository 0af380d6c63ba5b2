CREATE OR REPLACE FUNCTION idem._wait_for_key_lock(p_lock bigint, p_deadline timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_ms    bigint := ceil(extract(epoch FROM p_deadline - clock_timestamp()) * 1000);
  v_saved text := current_setting('lock_timeout');
BEGIN
  IF v_ms IS NULL OR v_ms <= 0 THEN RETURN false; END IF;  -- no deadline: not a waiter
  BEGIN
    PERFORM set_config('lock_timeout', v_ms || 'ms', true);
    PERFORM idem._wait_lock_key(p_lock);
    PERFORM idem._unlock_key(p_lock);
    PERFORM set_config('lock_timeout', v_saved, true);
    RETURN true;
  EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
    -- Timed out, or chosen to break a deadlock with a waiter that holds a key this transaction
    -- wants: either way a busy key. The rollback gave back lock_timeout and left no wait behind.
    RETURN false;
  END;
END $function$
;
COMMENT ON FUNCTION idem._wait_for_key_lock(bigint,timestamp with time zone) IS NULL;
REVOKE ALL ON FUNCTION idem._wait_for_key_lock(bigint,timestamp with time zone) FROM PUBLIC;
