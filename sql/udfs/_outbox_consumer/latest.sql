CREATE OR REPLACE FUNCTION idem._outbox_consumer(p_consumer text)
 RETURNS idem.outbox_consumers
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  r idem.outbox_consumers;
BEGIN
  IF idem._consumer_bindings_exist() THEN
    PERFORM idem._require_consumer(p_consumer);
  END IF;
  SELECT * INTO r FROM idem.outbox_consumers c WHERE c.consumer = p_consumer;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_OUTBOX_CONSUMER_UNKNOWN', format('no outbox consumer %s', coalesce(quote_literal(p_consumer), 'NULL')),
      'Register it once with idem.create_consumer(consumer, topics).');
  END IF;
  RETURN r;
END $function$
;
COMMENT ON FUNCTION idem._outbox_consumer(text) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_consumer(text) FROM PUBLIC;
