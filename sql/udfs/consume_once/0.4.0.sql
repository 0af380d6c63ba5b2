CREATE OR REPLACE FUNCTION idem.consume_once(consumer text, event_id bigint, token uuid DEFAULT NULL::uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  RETURN idem._outbox_consume_once(consumer, NULL, event_id, token);
END $function$
;
COMMENT ON FUNCTION idem.consume_once(text,bigint,uuid) IS 'True the first time the consumer applies the event, false for a redelivery; call it in the transaction of the effect. With the claim token it also fences out a worker whose claim was taken over.';
REVOKE ALL ON FUNCTION idem.consume_once(text,bigint,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.consume_once(text,bigint,uuid) TO idem_consumer;

CREATE OR REPLACE FUNCTION idem.consume_once(consumer text, tenant text, event_id bigint, token uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF tenant IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must not be NULL', 'Pass the tenant_id idem.claim_tenant returned with the event.');
  END IF;
  RETURN idem._outbox_consume_once(consumer, tenant, event_id, token);
END $function$
;
COMMENT ON FUNCTION idem.consume_once(text,text,bigint,uuid) IS 'idem.consume_once of an event of tenant (on Citus it runs on the tenant''s node, beside the effect''s rows); token NULL does not fence.';
REVOKE ALL ON FUNCTION idem.consume_once(text,text,bigint,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.consume_once(text,text,bigint,uuid) TO idem_consumer;
