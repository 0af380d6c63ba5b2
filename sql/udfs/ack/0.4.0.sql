CREATE OR REPLACE FUNCTION idem.ack(consumer text, event_id bigint, token uuid)
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT FROM idem.ack(consumer, ARRAY[event_id], token) $function$
;
COMMENT ON FUNCTION idem.ack(text,bigint,uuid) IS 'Acknowledges one claimed event.';
REVOKE ALL ON FUNCTION idem.ack(text,bigint,uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.ack(text,bigint,uuid) TO idem_consumer;

CREATE OR REPLACE FUNCTION idem.ack(consumer text, event_ids bigint[], token uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  RETURN idem._outbox_ack(consumer, NULL, event_ids, token);
END $function$
;
COMMENT ON FUNCTION idem.ack(text,bigint[],uuid) IS 'Acknowledges claimed events (one update per group); returns how many were newly acked. Ack in the transaction of the effect when it is in this database.';
REVOKE ALL ON FUNCTION idem.ack(text,bigint[],uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.ack(text,bigint[],uuid) TO idem_consumer;

CREATE OR REPLACE FUNCTION idem.ack(consumer text, tenant text, event_ids bigint[], token uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF tenant IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'tenant must not be NULL', 'Pass the tenant_id idem.claim_tenant returned with the events.');
  END IF;
  RETURN idem._outbox_ack(consumer, tenant, event_ids, token);
END $function$
;
COMMENT ON FUNCTION idem.ack(text,text,bigint[],uuid) IS 'idem.ack of events of tenant (on Citus it runs on the tenant''s node); another tenant''s event is unknown here.';
REVOKE ALL ON FUNCTION idem.ack(text,text,bigint[],uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.ack(text,text,bigint[],uuid) TO idem_consumer;
