CREATE OR REPLACE FUNCTION idem._require_consumer(p_consumer text)
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_bound text[];
BEGIN
  IF NOT idem._consumer_bindings_exist() THEN RETURN; END IF;  -- nobody is bound: no SQL
  v_bound := idem._session_consumers();
  IF v_bound IS NOT NULL AND NOT coalesce(p_consumer = ANY (v_bound), false) THEN
    PERFORM idem._raise('ERR_CONSUMER_FORBIDDEN',
      format('role %s is bound to consumers %s, not %s', session_user,
             array_to_string(v_bound, ', '), coalesce(quote_literal(p_consumer), 'NULL')),
      'An operator binds roles to consumers with idem.bind_consumer(role, consumer); act only for your own consumers.');
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_consumer(text) IS 'ERR_CONSUMER_FORBIDDEN unless the session is unbound or bound to consumer.';
REVOKE ALL ON FUNCTION idem._require_consumer(text) FROM PUBLIC;
