CREATE OR REPLACE FUNCTION idem.unbind_consumer(role name, consumer text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  PERFORM idem._require_manages_consumer_bindings('unbind_consumer');
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  DELETE FROM idem.consumer_bindings b WHERE b.role_oid = v_role AND b.consumer = unbind_consumer.consumer COLLATE "C";
  RETURN FOUND;
END $function$
;
COMMENT ON FUNCTION idem.unbind_consumer(name,text) IS 'Removes one consumer binding (true when there was one). A role left with no consumer binding acts for every consumer again.';
REVOKE ALL ON FUNCTION idem.unbind_consumer(name,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.unbind_consumer(name,text) TO idem_operator;
