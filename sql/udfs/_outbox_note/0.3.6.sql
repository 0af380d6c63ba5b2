CREATE OR REPLACE FUNCTION idem._outbox_note(tenant text, topic text, key text, payload jsonb)
 RETURNS bigint
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_outbox_note$function$
;
COMMENT ON FUNCTION idem._outbox_note(text,text,text,jsonb) IS 'Checks an event''s tenant, key and payload size, remembers its group for the commit-time sequencing, returns the transaction''s outbox id.';
REVOKE ALL ON FUNCTION idem._outbox_note(text,text,text,jsonb) FROM PUBLIC;
