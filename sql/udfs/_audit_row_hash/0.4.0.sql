CREATE OR REPLACE FUNCTION idem._audit_row_hash(m idem.mutations)
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  -- Every column, in order, as one JSON array: jsonb's text is the same in every session, and
  -- times are seconds since the epoch as exact decimals ('Infinity' too; timestamptz's text would
  -- follow TimeZone); the jsonb column as its text, so that SQL NULL and JSON null differ. Scheme 1;
  -- a column added to idem.mutations is a new scheme, never a change of this one.
  SELECT sha256(convert_to(jsonb_build_array(1, m.tenant_id, m.mutation_id, encode(m.scope_digest, 'hex'),
      m.client_key, m.caller_id, m.resource, m.generation, m.attempt, m.mutation_type, m.outcome,
      m.handler_called, m.order_id, m.handler_response::text, m.local_status, m.error_message,
      m.recovery_point, m.retry_count, extract(epoch FROM m.attempted_at)::text,
      extract(epoch FROM m.completed_at)::text)::text, 'UTF8'))
$function$
;
COMMENT ON FUNCTION idem._audit_row_hash(idem.mutations) IS 'The SHA-256 of an audit row''s content (every column; times as epoch seconds), as idem.seal_audit seals it.';
REVOKE ALL ON FUNCTION idem._audit_row_hash(idem.mutations) FROM PUBLIC;
