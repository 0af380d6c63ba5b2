CREATE OR REPLACE FUNCTION idem.nack(consumer text, event_id bigint, token uuid, error text, retry_in interval DEFAULT NULL::interval)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  RETURN idem._outbox_nack(consumer, NULL, event_id, token, error, retry_in);
END $function$
;
COMMENT ON FUNCTION idem.nack(text,bigint,uuid,text,interval) IS 'Gives the claim back: the event failed with error. It is retried after retry_in (default 1 s doubling, at most 5 min); its max_attempts-th failure makes it a dead letter. Returns retry or dead_letter.';
REVOKE ALL ON FUNCTION idem.nack(text,bigint,uuid,text,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.nack(text,bigint,uuid,text,interval) TO idem_consumer;

CREATE OR REPLACE FUNCTION idem.nack(consumer text, tenant text, event_id bigint, token uuid, error text, retry_in interval)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF tenant IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must not be NULL', 'Pass the tenant_id idem.claim_tenant returned with the event.');
  END IF;
  RETURN idem._outbox_nack(consumer, tenant, event_id, token, error, retry_in);
END $function$
;
COMMENT ON FUNCTION idem.nack(text,text,bigint,uuid,text,interval) IS 'idem.nack of an event of tenant (on Citus it runs on the tenant''s node); retry_in NULL is the default backoff.';
REVOKE ALL ON FUNCTION idem.nack(text,text,bigint,uuid,text,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.nack(text,text,bigint,uuid,text,interval) TO idem_consumer;
