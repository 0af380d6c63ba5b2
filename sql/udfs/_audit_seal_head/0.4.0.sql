CREATE OR REPLACE FUNCTION idem._audit_seal_head(s idem.audit_seals)
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  -- A seal's head: the previous head, then everything the seal says, so that a head kept
  -- elsewhere fixes this seal and, through the chain, every seal before it.
  SELECT sha256(int4send(coalesce(length(s.previous_head), 0)) || coalesce(s.previous_head, ''::bytea) || int8send(s.seal_id)
                || int8send(s.first_id) || int8send(s.last_id) || int8send(s.row_count)
                || int4send(length(s.root)) || s.root || convert_to(extract(epoch FROM s.sealed_at)::text, 'UTF8'))
$function$
;
COMMENT ON FUNCTION idem._audit_seal_head(idem.audit_seals) IS 'The SHA-256 head of a seal: previous head, id, id range, row count, time and Merkle root.';
REVOKE ALL ON FUNCTION idem._audit_seal_head(idem.audit_seals) FROM PUBLIC;
