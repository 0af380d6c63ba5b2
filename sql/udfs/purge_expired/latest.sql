CREATE OR REPLACE FUNCTION idem.purge_expired(batch integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_unbound('purge_expired');
  RETURN idem._purge_expired(NULL, batch);
END $function$
;
COMMENT ON FUNCTION idem.purge_expired(integer) IS 'Delete up to least(batch, 500) records that became history (their generation is kept in idem.retired_keys) and forget generations older than idem.history_retention; returns the records removed. Call until 0, each call in its own transaction.';
REVOKE ALL ON FUNCTION idem.purge_expired(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.purge_expired(integer) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.purge_expired(integer) TO idem_operator;

-- The batch has no default here: purge_expired('500') or purge_expired(NULL) must still mean the
-- form above, not one tenant named '500'.
CREATE OR REPLACE FUNCTION idem.purge_expired(tenant text, batch integer)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  -- One tenant's records, under its own node's key locks: on Citus it runs on the tenant's node
  -- (idem.citus_distribute registers it), where the fast path takes the same locks.
  IF tenant IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must not be NULL', 'Call purge_expired(batch) for every tenant.');
  END IF;
  IF tenant = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must not be empty');
  END IF;
  PERFORM idem._require_short_text(tenant, 'tenant');
  PERFORM idem._require_tenant(tenant);
  RETURN idem._purge_expired(tenant, batch);
END $function$
;
COMMENT ON FUNCTION idem.purge_expired(text,integer) IS 'purge_expired for one tenant (a bound role: its own); on Citus it runs on the tenant''s node (docs/citus.md). Call until 0, each call in its own transaction.';
REVOKE ALL ON FUNCTION idem.purge_expired(text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.purge_expired(text,integer) TO idem_service;
GRANT EXECUTE ON FUNCTION idem.purge_expired(text,integer) TO idem_operator;
