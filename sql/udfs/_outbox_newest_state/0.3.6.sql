CREATE OR REPLACE FUNCTION idem._outbox_newest_state(tenant text, consumer text, topic text)
 RETURNS bigint
 LANGUAGE c
 STRICT
AS 'MODULE_PATHNAME', $function$idem_outbox_newest_state$function$
;
COMMENT ON FUNCTION idem._outbox_newest_state(text,text,text) IS 'The newest version of a consumer''s state of a group in the latest committed data (0: none), whatever the caller''s snapshot.';
REVOKE ALL ON FUNCTION idem._outbox_newest_state(text,text,text) FROM PUBLIC;
