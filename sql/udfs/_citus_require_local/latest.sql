CREATE OR REPLACE FUNCTION idem._citus_require_local(p_tenant text)
 RETURNS void
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  -- Called on Citus (extension/citus/citus_mode.cpp); anywhere else it says so. A NULL tenant is
  -- the caller's to refuse, with its own error.
  IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
    PERFORM idem._raise('ERR_CITUS_MISSING', 'Citus is not installed in this database', 'Only Citus mode calls this (docs/citus.md).');
  END IF;
  IF p_tenant IS NULL THEN RETURN; END IF;
  IF NOT EXISTS (SELECT FROM pg_dist_placement p
                  WHERE p.shardid = get_shard_id_for_distribution_column('idem.keys', p_tenant)
                    AND p.groupid = (SELECT l.groupid FROM pg_dist_local_group l)) THEN
    PERFORM idem._raise('ERR_TENANT_NOT_LOCAL',
      format('the shard of tenant %s is not on this node: its key locks are another node''s', quote_literal(p_tenant)),
      'Call the tenant-first form (complete(tenant, handle, ...)), which Citus runs on the tenant''s node (docs/citus.md).');
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._citus_require_local(text) IS NULL;
REVOKE ALL ON FUNCTION idem._citus_require_local(text) FROM PUBLIC;
