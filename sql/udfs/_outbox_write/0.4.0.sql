CREATE OR REPLACE FUNCTION idem._outbox_write(r idem.outbox_cursor_states)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
  -- The group's next version: its newest + 1, read under the cursor's lock, which every writer
  -- holds. Not a node-wide sequence: on Citus a consumer's calls run on the tenant's node or on
  -- the coordinator, each drawing from its own range, and after a shard move from another
  -- node's; the newest state must still be the one written last. A snapshot that does not see
  -- the newest (REPEATABLE READ) meets the primary key: the write fails rather than go unseen.
  r.version := coalesce((SELECT max(s.version) FROM idem.outbox_cursor_states s
                          WHERE s.tenant_id = r.tenant_id AND s.consumer = r.consumer AND s.topic = r.topic), 0) + 1;
  r.written_at := clock_timestamp();
  INSERT INTO idem.outbox_cursor_states SELECT r.*;
END $function$
;
COMMENT ON FUNCTION idem._outbox_write(idem.outbox_cursor_states) IS NULL;
REVOKE ALL ON FUNCTION idem._outbox_write(idem.outbox_cursor_states) FROM PUBLIC;
