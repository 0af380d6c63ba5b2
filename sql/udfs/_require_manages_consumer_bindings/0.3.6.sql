CREATE OR REPLACE FUNCTION idem._require_manages_consumer_bindings(p_action text)
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  PERFORM idem._require_unbound(p_action);
  IF idem._consumer_bindings_exist() AND idem._session_consumers() IS NOT NULL THEN
    PERFORM idem._raise('ERR_CONSUMER_FORBIDDEN',
      format('role %s is bound to consumers %s; %s is for an unbound operator', session_user,
             array_to_string(idem._session_consumers(), ', '), p_action),
      'Run it from an operator role bound to no tenant and no consumer.');
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._require_manages_consumer_bindings(text) IS NULL;
REVOKE ALL ON FUNCTION idem._require_manages_consumer_bindings(text) FROM PUBLIC;
