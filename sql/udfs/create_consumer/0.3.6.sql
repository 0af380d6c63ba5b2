CREATE OR REPLACE FUNCTION idem.create_consumer(consumer text, topics text[], max_attempts integer DEFAULT NULL::integer)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_missing text;
BEGIN
  PERFORM idem._require_consumer(consumer);
  PERFORM idem._require_flat_array(topics, 'topics');
  IF consumer IS NULL OR consumer !~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('consumer %s is not a consumer name: 1-200 of A-Z a-z 0-9 . _ : -, starting with a letter or digit', coalesce(quote_literal(consumer), 'NULL')));
  END IF;
  IF topics IS NULL OR cardinality(topics) = 0 OR array_position(topics, NULL) IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'topics must be a non-empty array without NULLs');
  END IF;
  IF max_attempts IS NOT NULL AND max_attempts NOT BETWEEN 1 AND 1000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('max_attempts must be 1..1000, got %s', coalesce(max_attempts::text, 'NULL')));
  END IF;
  SELECT t INTO v_missing FROM unnest(topics) AS t
   WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_topics o WHERE o.topic = t) LIMIT 1;
  IF v_missing IS NOT NULL THEN
    PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN', format('no outbox topic %L', v_missing),
      'Create it first: SELECT idem.create_topic(''' || v_missing || ''');');
  END IF;
  -- A new consumer gets 5 attempts unless told; an existing one keeps its own unless told.
  INSERT INTO idem.outbox_consumers AS c (consumer, max_attempts)
    VALUES (create_consumer.consumer, coalesce(create_consumer.max_attempts, 5))
    ON CONFLICT ON CONSTRAINT outbox_consumers_pkey
    DO UPDATE SET max_attempts = coalesce(create_consumer.max_attempts, c.max_attempts);
  INSERT INTO idem.outbox_subscriptions (consumer, topic)
    SELECT DISTINCT create_consumer.consumer, t FROM unnest(topics) AS t
    ON CONFLICT DO NOTHING;
END $function$
;
COMMENT ON FUNCTION idem.create_consumer(text,text[],integer) IS 'Registers a consumer (or adds topics to it, and sets max_attempts when given; 5 for a new one): it gets every event of its topics, from the oldest one retained.';
REVOKE ALL ON FUNCTION idem.create_consumer(text,text[],integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.create_consumer(text,text[],integer) TO idem_operator;
