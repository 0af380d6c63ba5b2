CREATE OR REPLACE FUNCTION idem._refuse_key_reused(p_res idem.acquire_result, p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text, p_mutation_type text, p_differs text[], p_lock bigint, p_owner_lock bigint)
 RETURNS idem.acquire_result
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._unlock_key(p_lock);
  IF p_owner_lock IS NOT NULL THEN PERFORM idem._unlock_key(p_owner_lock); END IF;
  p_res.outcome := 'key_reused';
  p_res.key_reuse_differs := p_differs;
  IF NOT current_setting('transaction_read_only')::boolean THEN
    PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, NULL, NULL, p_mutation_type,
                        'key_reused', false, NULL, NULL, NULL,
                        'key first used with another ' || array_to_string(p_differs, ' and '), NULL, 0,
                        clock_timestamp(), NULL);
  END IF;
  RETURN p_res;
END $function$
;
COMMENT ON FUNCTION idem._refuse_key_reused(idem.acquire_result,text,bytea,text,text,text,text,text[],bigint,bigint) IS NULL;
REVOKE ALL ON FUNCTION idem._refuse_key_reused(idem.acquire_result,text,bytea,text,text,text,text,text[],bigint,bigint) FROM PUBLIC;
