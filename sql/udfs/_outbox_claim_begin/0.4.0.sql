CREATE OR REPLACE FUNCTION idem._outbox_claim_begin(p_consumer text, p_topics text[], p_batch integer, p_visibility interval, OUT consumer_row idem.outbox_consumers, OUT topics text[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_unknown text;
BEGIN
  -- What idem.claim and idem.claim_tenant check before they hand anything out.
  PERFORM idem._require_flat_array(p_topics, 'topics');
  consumer_row := idem._outbox_consumer(p_consumer);
  IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 10000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..10000, got %s', coalesce(p_batch::text, 'NULL')));
  END IF;
  IF p_visibility IS NULL OR p_visibility <= interval '0' OR p_visibility > interval '12 hours' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('visibility must be a positive elapsed time of at most 12 hours, got %s', coalesce(p_visibility::text, 'NULL')));
  END IF;
  IF p_topics IS NULL THEN
    SELECT array_agg(s.topic ORDER BY s.topic) INTO topics FROM idem.outbox_subscriptions s WHERE s.consumer = p_consumer;
  ELSE
    SELECT t INTO v_unknown FROM unnest(p_topics) AS t
     WHERE t IS NULL OR NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = p_consumer AND s.topic = t)
     LIMIT 1;
    IF FOUND THEN
      PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN',
        format('consumer %L does not subscribe to topic %s', p_consumer, coalesce(quote_literal(v_unknown), 'NULL')),
        'Subscribe with idem.create_consumer(consumer, topics), or pass NULL for all of its topics.');
    END IF;
    topics := p_topics;
  END IF;
END $function$
;
COMMENT ON FUNCTION idem._outbox_claim_begin(text,text[],integer,interval) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_claim_begin(text,text[],integer,interval) FROM PUBLIC;
