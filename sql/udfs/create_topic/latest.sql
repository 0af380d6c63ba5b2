CREATE OR REPLACE FUNCTION idem.create_topic(topic text, description text DEFAULT ''::text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  IF topic IS NULL OR topic !~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('topic %s is not a topic name: 1-200 of A-Z a-z 0-9 . _ : -, starting with a letter or digit', coalesce(quote_literal(topic), 'NULL')));
  END IF;
  INSERT INTO idem.outbox_topics AS t (topic, description) VALUES (create_topic.topic, coalesce(description, ''))
    ON CONFLICT ON CONSTRAINT outbox_topics_pkey DO NOTHING;
  RETURN FOUND;
END $function$
;
COMMENT ON FUNCTION idem.create_topic(text,text) IS 'Registers an outbox topic; false when it already exists.';
REVOKE ALL ON FUNCTION idem.create_topic(text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.create_topic(text,text) TO idem_operator;
