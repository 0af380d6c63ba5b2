CREATE OR REPLACE FUNCTION idem._outbox_write(r idem.outbox_cursor_states)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  r.version := nextval('idem.outbox_state_seq');
  r.written_at := clock_timestamp();
  INSERT INTO idem.outbox_cursor_states SELECT r.*;
END $function$
;
COMMENT ON FUNCTION idem._outbox_write(idem.outbox_cursor_states) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_write(idem.outbox_cursor_states) FROM PUBLIC;
