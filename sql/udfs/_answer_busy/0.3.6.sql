CREATE OR REPLACE FUNCTION idem._answer_busy(p_res idem.acquire_result, p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text, p_mutation_type text, p_generation integer, p_retry_count integer)
 RETURNS idem.acquire_result
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  p_res.outcome := 'in_progress';
  p_res.generation := p_generation;
  p_res.retry_after := idem._retry_after();
  IF NOT current_setting('transaction_read_only')::boolean THEN
    PERFORM idem._audit(p_tenant, p_digest, p_key, p_caller, p_resource, p_generation, NULL, p_mutation_type,
                        'in_progress', false, NULL, NULL, NULL, NULL, NULL, p_retry_count, clock_timestamp(), NULL);
  END IF;
  RETURN p_res;
END $function$
;
COMMENT ON FUNCTION idem._answer_busy(idem.acquire_result,text,bytea,text,text,text,text,integer,integer) IS NULL;
REVOKE ALL ON FUNCTION idem._answer_busy(idem.acquire_result,text,bytea,text,text,text,text,integer,integer) FROM PUBLIC;
