CREATE OR REPLACE FUNCTION idem.bind_consumer(role name, consumer text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_role oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = role);
BEGIN
  PERFORM idem._require_manages_consumer_bindings('bind_consumer');
  IF v_role IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('no role %s', coalesce(quote_ident(role), 'NULL')));
  END IF;
  -- A binding to a consumer that does not exist would leave the role acting for nothing.
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_consumers c WHERE c.consumer = bind_consumer.consumer) THEN
    PERFORM idem._raise('ERR_OUTBOX_CONSUMER_UNKNOWN', format('no outbox consumer %s', coalesce(quote_literal(consumer), 'NULL')),
      'Register it first with idem.create_consumer(consumer, topics).');
  END IF;
  INSERT INTO idem.consumer_bindings (role_oid, consumer, bound_by, bound_at)
    VALUES (v_role, consumer, session_user, clock_timestamp()) ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $function$
;
COMMENT ON FUNCTION idem.bind_consumer(name,text) IS 'Binds role to an outbox consumer (true; false when it already was): sessions of that role, or of its members, claim, ack, nack and consume_once only for their bound consumers.';
REVOKE ALL ON FUNCTION idem.bind_consumer(name,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.bind_consumer(name,text) TO idem_operator;
