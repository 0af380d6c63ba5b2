CREATE OR REPLACE FUNCTION idem.purge_audit(older_than interval DEFAULT '90 days'::interval, batch integer DEFAULT 10000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  v_cutoff timestamptz;
  v_mutations integer;
  v_transitions integer;
BEGIN
  PERFORM idem._require_unbound('purge_audit');
  IF older_than IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'older_than must not be NULL');
  END IF;
  IF batch IS NULL OR batch < 1 OR batch > 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')),
      'Call purge_audit repeatedly until it returns 0.');
  END IF;
  -- The trail is evidence: an operator may age it out, not erase what is recent.
  IF idem._elapsed(older_than) < idem._min_audit_retention() THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('older_than (%s) is shorter than idem.min_audit_retention (%s)', idem._elapsed(older_than), idem._min_audit_retention()),
      'Keep the audit trail at least idem.min_audit_retention; a superuser may lower that setting.');
  END IF;
  v_cutoff := clock_timestamp() - idem._elapsed(older_than);
  PERFORM idem._allow_audit_purge(true);
  DELETE FROM idem.mutations m USING (
      SELECT o.tenant_id, o.mutation_id FROM idem.mutations o
       WHERE o.attempted_at < v_cutoff ORDER BY o.attempted_at LIMIT batch) old
   WHERE m.tenant_id = old.tenant_id AND m.mutation_id = old.mutation_id;
  GET DIAGNOSTICS v_mutations = ROW_COUNT;
  DELETE FROM idem.transition_log t USING (
      SELECT o.log_id FROM idem.transition_log o WHERE o.at < v_cutoff ORDER BY o.at LIMIT batch) old
   WHERE t.log_id = old.log_id;
  GET DIAGNOSTICS v_transitions = ROW_COUNT;
  PERFORM idem._allow_audit_purge(false);
  RETURN v_mutations + v_transitions;
END $function$
;
COMMENT ON FUNCTION idem.purge_audit(interval,integer) IS 'Deletes up to batch audit rows and up to batch transition log rows older than older_than (elapsed time, 90 days by default, at least idem.min_audit_retention); returns the rows removed. Call until 0.';
REVOKE ALL ON FUNCTION idem.purge_audit(interval,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.purge_audit(interval,integer) TO idem_operator;
